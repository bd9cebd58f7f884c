package store

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
)

// decodeEvent reads badger's raw value (eventstore internal/binary
// hybrid.go Unmarshal, which Go does not let us import). A damaged value
// is an error, not a crash.
func decodeEvent(data []byte, evt *nostr.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: damaged event %x in the store: %v", data[:min(len(data), 32)], r)
		}
	}()
	evt.ID = hex.EncodeToString(data[0:32])
	evt.PubKey = hex.EncodeToString(data[32:64])
	evt.Sig = hex.EncodeToString(data[64:128])
	evt.CreatedAt = nostr.Timestamp(binary.BigEndian.Uint32(data[128:132]))
	evt.Kind = int(binary.BigEndian.Uint16(data[132:134]))
	contentLength := int(binary.BigEndian.Uint16(data[134:136]))
	evt.Content = string(data[136 : 136+contentLength])
	curr := 136 + contentLength
	nTags := binary.BigEndian.Uint16(data[curr : curr+2])
	curr++
	evt.Tags = make(nostr.Tags, nTags)
	for t := range evt.Tags {
		curr++
		nItems := int(data[curr])
		tag := make(nostr.Tag, nItems)
		for i := range tag {
			curr++
			size := int(binary.BigEndian.Uint16(data[curr : curr+2]))
			start := curr + 2
			tag[i] = string(data[start : start+size])
			curr = start + size
		}
		evt.Tags[t] = tag
	}
	return nil
}
