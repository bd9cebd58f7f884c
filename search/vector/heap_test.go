package vector

import (
	"encoding/hex"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkHNSW_Heap reports the live heap a linked graph index holds per
// vector (ids included, as 64-hex-digit event ids), which is what decides
// how many memories fit in a relay's RAM:
//
//	[SNOWCLAW_HNSW_HEAP=<vectors>] go test ./search/vector -run '^$' -bench HNSW_Heap -benchtime 1x
func BenchmarkHNSW_Heap(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("SNOWCLAW_HNSW_HEAP"))
	if n <= 0 {
		n = 30_000
	}
	const dim = 512
	for range b.N {
		rng := rand.New(rand.NewSource(1))
		ids := make([]string, n)
		id := make([]byte, 32)
		for i := range ids {
			rng.Read(id)
			ids[i] = hex.EncodeToString(id)
		}
		before := liveHeap()
		x := NewAuto(dim, 1000, DefaultParams)
		for i, id := range ids {
			x.Add(id, randomUnit(rng, dim))
			if i%4096 == 0 {
				x.Wait() // keep the worker's backlog (and its garbage) small
			}
		}
		x.Wait()
		after := liveHeap()
		b.ReportMetric(float64(after-before)/float64(n), "B/vector")
		b.ReportMetric(float64(after-before)/float64(n)*1e6/(1<<30), "GiB/1M")
		runtime.KeepAlive(x)
		runtime.KeepAlive(ids)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The graph's heap per 512-dimensional vector stays under a kilobyte: its
// code (512 B), links and bookkeeping, with no float copy of the vector
// (the half-precision one took 1,024 B more, 2,142 B in all).
func TestHNSW_HeapPerVector(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("links 8k vectors: go test ./search/vector/ without -short and -race")
	}
	const dim, n = 512, 2 * tableRows // whole chunks, so no chunk is mostly empty
	rng := rand.New(rand.NewSource(2))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(1_000_000 + i)
	}
	before := liveHeap()
	x := NewAuto(dim, 1000, DefaultParams)
	for _, id := range ids {
		x.Add(id, randomUnit(rng, dim)) // garbage once added
	}
	x.Wait()
	per := (float64(liveHeap()) - float64(before)) / n
	runtime.KeepAlive(x)
	t.Logf("%.0f B per vector", per)
	if per > 1000 {
		t.Fatalf("%.0f B of heap per vector, want ≤ 1000", per)
	}
}
