package relay

import (
	"testing"
	"testing/synctest"
)

// TestOutbox: live frames never wait and report overflow; own-request
// frames wait for room below half the limit; close releases waiters and
// the writer; fail leaves only the last frame.
func TestOutbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutbox(10)
		if !o.offer([]byte("12345678")) || o.offer([]byte("abc")) {
			t.Fatal("offer: 8 bytes fit in 10, 3 more do not")
		}
		put := make(chan bool)
		go func() { put <- o.put([]byte("xy")) }()
		synctest.Wait() // put is blocked in the outbox, or sending what it returned
		select {
		case <-put:
			t.Fatal("put did not wait with the queue over half full")
		default:
		}
		if b, ok := o.next(); !ok || string(b) != "12345678" {
			t.Fatalf("next: %q %v", b, ok)
		}
		if !<-put {
			t.Fatal("put after room was made")
		}
		if !o.fail([]byte("bye")) || o.fail([]byte("again")) {
			t.Fatal("fail reports the first call only")
		}
		if b, ok := o.next(); !ok || string(b) != "bye" {
			t.Fatalf("after fail: %q %v", b, ok)
		}
		if _, ok := o.next(); ok {
			t.Fatal("a failed outbox yields only its last frame")
		}
		o2 := newOutbox(4)
		o2.offer([]byte("1234"))
		go func() { put <- o2.put([]byte("5")) }()
		o2.close()
		if <-put {
			t.Fatal("put on a closed outbox succeeded")
		}
		if _, ok := o2.next(); ok {
			t.Fatal("next on a closed outbox")
		}
	})
}
