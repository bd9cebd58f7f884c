package hashembed

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// A batch embedded on several cores gives each text the vector it gets
// alone, in order.
func TestBuiltinEmbedder_BatchSameAsOneByOne(t *testing.T) {
	e := Embedder{}
	var texts []string
	for i := range 1000 {
		texts = append(texts, fmt.Sprintf("note %d: the walrus %d crossed harbour %d", i, i%7, i%13))
	}
	batch, err := e.Embed(context.Background(), texts)
	if err != nil || len(batch) != len(texts) {
		t.Fatalf("Embed: %d vectors, %v", len(batch), err)
	}
	for i, text := range texts {
		one, err := e.Embed(context.Background(), []string{text})
		if err != nil || !reflect.DeepEqual(one[0], batch[i]) {
			t.Fatalf("text %d: batch vector differs from its own (%v)", i, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, texts); err == nil {
		t.Fatal("a cancelled batch embedded anyway")
	}
}
