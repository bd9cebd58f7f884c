package vector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"reflect"
	"strconv"
	"testing"
)

// buildAuto adds n random vectors (ids "0"…) to a new Auto that turns into
// a graph at threshold, removes every seventh when remove is set, and
// waits for the graph.
func buildAuto(rng *rand.Rand, dim, threshold, n int, remove bool) *Auto {
	return buildAutoWith(DefaultParams, rng, dim, threshold, n, remove)
}

// buildAutoWith is buildAuto with the graph's parameters p.
func buildAutoWith(p Params, rng *rand.Rand, dim, threshold, n int, remove bool) *Auto {
	x := NewAuto(dim, threshold, p)
	for i := range n {
		x.Add(strconv.Itoa(i), randomUnit(rng, dim))
		if remove && i%7 == 3 {
			x.Remove(strconv.Itoa(i - 2))
		}
	}
	x.Wait()
	return x
}

func all(string) bool { return true }

func sameGraph(t *testing.T, a, b *annIndex) {
	t.Helper()
	ga, gb := a.g, b.g
	if ga.built != gb.built || ga.entry != gb.entry || ga.top != gb.top || ga.nDead != gb.nDead || ga.len() != gb.len() ||
		!reflect.DeepEqual(ga.dead, gb.dead) || !reflect.DeepEqual(ga.levels, gb.levels) ||
		!reflect.DeepEqual(ga.link0, gb.link0) || !reflect.DeepEqual(ga.upper, gb.upper) || !reflect.DeepEqual(ga.upperAt, gb.upperAt) ||
		!reflect.DeepEqual(a.pos, b.pos) || !reflect.DeepEqual(a.sum, b.sum) {
		t.Fatalf("graphs differ: built %d/%d entry %d/%d top %d/%d nodes %d/%d",
			ga.built, gb.built, ga.entry, gb.entry, ga.top, gb.top, ga.len(), gb.len())
	}
	for n := range ga.ids { // a dead node's id and vector are not saved
		if !ga.dead[n] && (ga.ids[n] != gb.ids[n] ||
			!reflect.DeepEqual(ga.code(n), gb.code(n)) || ga.scales[n] != gb.scales[n]) {
			t.Fatalf("node %d differs", n)
		}
	}
}

// A loaded snapshot is the graph that was saved, and it goes on exactly as
// the saved one would have: nodes added after loading are linked as they
// would have been without the save (levels drawn from where they were).
// (With removals it is the same graph too, but later links may differ:
// a removed node's code is not saved, so walks no longer pass through it.)
func TestSnapshot_LoadContinuesTheSameGraph(t *testing.T) {
	for _, remove := range []bool{false, true} {
		t.Run(fmt.Sprint("remove=", remove), func(t *testing.T) { loadContinues(t, remove) })
	}
}

func loadContinues(t *testing.T, remove bool) {
	// Past hnswSerialBelow, so that the graph goes on linking in batches;
	// the cheap parameters of smallHNSW make the same point as the
	// defaults at a third of the cost.
	const dim, threshold, n = 16, 100, hnswSerialBelow + 904
	p := smallHNSW
	saved := buildAutoWith(p, rand.New(rand.NewSource(9)), dim, threshold, n, remove)
	twin := buildAutoWith(p, rand.New(rand.NewSource(9)), dim, threshold, n, remove)
	var buf bytes.Buffer
	ok, err := saved.Save(&buf, all, []byte("tag1"))
	if err != nil || !ok {
		t.Fatalf("Save: %v %v", ok, err)
	}
	loaded, tag, err := Load(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim, threshold, p)
	if err != nil || string(tag) != "tag1" {
		t.Fatal(err, string(tag))
	}
	loaded.Wait()
	sameGraph(t, loaded.ann, twin.ann)
	q := randomUnit(rand.New(rand.NewSource(1)), dim)
	if got, want := loaded.Search(q, 20), twin.Search(q, 20); !reflect.DeepEqual(got, want) {
		t.Fatalf("search after load: %v, want %v", got, want)
	}
	if remove {
		return
	}
	rng := rand.New(rand.NewSource(2))
	for i := n; i < n+700; i++ {
		v := randomUnit(rng, dim)
		loaded.Add(strconv.Itoa(i), v)
		twin.Add(strconv.Itoa(i), v)
	}
	loaded.Wait()
	twin.Wait()
	sameGraph(t, loaded.ann, twin.ann)
}

// A flat index has no graph to save: Save says so and writes nothing.
func TestSnapshot_FlatSavesNothing(t *testing.T) {
	x := buildAuto(rand.New(rand.NewSource(1)), 8, 1000, 50, true)
	var buf bytes.Buffer
	if ok, err := x.Save(&buf, all, nil); ok || err != nil || buf.Len() != 0 {
		t.Fatalf("Save of a flat index: %v %v, %d bytes", ok, err, buf.Len())
	}
}

// Any damage is ErrSnapshot: a flipped byte anywhere, a truncation, other
// parameters, an empty file. Nothing panics.
func TestSnapshot_DamageIsDetected(t *testing.T) {
	const dim, threshold = 16, 50
	x := buildAuto(rand.New(rand.NewSource(3)), dim, threshold, 600, true)
	var buf bytes.Buffer
	if ok, err := x.Save(&buf, all, nil); !ok || err != nil {
		t.Fatalf("Save: %v %v", ok, err)
	}
	good := buf.Bytes()
	if _, _, err := Load(bytes.NewReader(good), int64(len(good)), dim, threshold, DefaultParams); err != nil {
		t.Fatalf("intact snapshot: %v", err)
	}
	rng := rand.New(rand.NewSource(4))
	cases := map[string][]byte{"empty": nil, "truncated": good[:len(good)/2], "no trailer": good[:len(good)-4]}
	for i := range 40 {
		bad := bytes.Clone(good)
		bad[rng.Intn(len(bad))] ^= byte(1 + rng.Intn(255))
		cases["flip "+strconv.Itoa(i)] = bad
	}
	for name, b := range cases {
		if _, _, err := Load(bytes.NewReader(b), int64(len(b)), dim, threshold, DefaultParams); !errors.Is(err, ErrSnapshot) {
			t.Errorf("%s: %v, want ErrSnapshot", name, err)
		}
	}
	other := DefaultParams
	other.M = 8
	if _, _, err := Load(bytes.NewReader(good), int64(len(good)), dim, threshold, other); !errors.Is(err, ErrSnapshot) {
		t.Errorf("other parameters: %v, want ErrSnapshot", err)
	}
	if _, _, err := Load(bytes.NewReader(good), int64(len(good)), dim*2, threshold, DefaultParams); !errors.Is(err, ErrSnapshot) {
		t.Errorf("other dimension: %v, want ErrSnapshot", err)
	}
}

// A node keep refuses (a volatile doc's vector, which must never reach the
// disk) is written dead, without its id, vector or code, and the running
// sum leaves it out: the loaded index neither finds nor holds it.
func TestSnapshot_KeepLeavesNodesOut(t *testing.T) {
	const dim, threshold, n = 16, 50, 400
	x := buildAuto(rand.New(rand.NewSource(5)), dim, threshold, n, true)
	secret := "100"
	sv, ok := x.Get(secret)
	if !ok {
		t.Fatal("no vector for the secret id")
	}
	var buf bytes.Buffer
	if ok, err := x.Save(&buf, func(id string) bool { return id != secret }, nil); !ok || err != nil {
		t.Fatalf("Save: %v %v", ok, err)
	}
	if bytes.Contains(buf.Bytes(), []byte(`"100"`)) || bytes.Contains(buf.Bytes(), asBytes(x.ann.g.code(x.ann.pos[secret]))) {
		t.Fatal("the refused node's id or vector is in the snapshot")
	}
	y, _, err := Load(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim, threshold, DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := y.Get(secret); ok {
		t.Fatal("the refused node is in the loaded index")
	}
	if y.Len() != x.Len()-1 {
		t.Fatalf("Len %d, want %d", y.Len(), x.Len()-1)
	}
	for _, h := range y.Search(sv, 5) {
		if h.ID == secret || h.ID == "" {
			t.Fatalf("search returns %q", h.ID)
		}
	}
	want := x.Mean()
	for j := range want { // the mean of what was kept
		want[j] = (want[j]*float32(x.Len()) - sv[j]) / float32(x.Len()-1)
	}
	got := y.Mean()
	for j := range got {
		if d := got[j] - want[j]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("mean[%d] = %v, want %v", j, got[j], want[j])
		}
	}
}

// A damaged node count is refused before anything is allocated for it:
// the checksum is only reached at the end, and 2^30 nodes of this
// dimension would ask for terabytes.
func TestSnapshot_HugeCountRefusedUpFront(t *testing.T) {
	const dim, threshold = 16, 50
	x := buildAuto(rand.New(rand.NewSource(8)), dim, threshold, 300, false)
	var buf bytes.Buffer
	if ok, err := x.Save(&buf, all, nil); !ok || err != nil {
		t.Fatalf("Save: %v %v", ok, err)
	}
	b := buf.Bytes()
	at := len(snapshotMagic) + 4 + 8*8 // no tag; the ninth header word is the node count
	if got := binary.LittleEndian.Uint64(b[at:]); got != 300 {
		t.Fatalf("node count at %d is %d, the layout moved", at, got)
	}
	for _, n := range []uint64{1 << 30, maxSnapshotNodes - 1, 301} {
		binary.LittleEndian.PutUint64(b[at:], n)
		if _, _, err := Load(bytes.NewReader(b), int64(len(b)), dim, threshold, DefaultParams); !errors.Is(err, ErrSnapshot) {
			t.Errorf("count %d: %v, want ErrSnapshot", n, err)
		}
	}
}

// A snapshot of the first format, which also held every vector in half
// precision between the dead flags and the codes, is refused as such
// (ErrSnapshot, so its owner rebuilds from its own record of the vectors)
// even when its checksum is right: never read as the current layout.
func TestSnapshot_VersionOneRefused(t *testing.T) {
	const dim, threshold, n = 16, 50, 300
	x := buildAuto(rand.New(rand.NewSource(9)), dim, threshold, n, false)
	var buf bytes.Buffer
	if ok, err := x.Save(&buf, all, []byte("tag")); !ok || err != nil {
		t.Fatalf("Save: %v %v", ok, err)
	}
	cur := buf.Bytes()
	// magic, tag, 13 header words, the ids, the dead flags: then version 1
	// had the half-precision vectors.
	at := len(snapshotMagic) + 4 + 3 + 13*8
	for range n {
		at += 4 + int(binary.LittleEndian.Uint32(cur[at:]))
	}
	at += n
	v1 := []byte("snowclaw-vectors-1\n")
	v1 = append(v1, cur[len(snapshotMagic):at]...)
	half := make([]byte, 2*dim)
	for i := range n {
		v, _ := x.Get(strconv.Itoa(i))
		for j, f := range v {
			binary.LittleEndian.PutUint16(half[2*j:], uint16(math.Float32bits(f)>>16)) // any bits will do
		}
		v1 = append(v1, half...)
	}
	v1 = append(v1, cur[at:len(cur)-4]...)
	v1 = binary.LittleEndian.AppendUint32(v1, crc32.Checksum(v1, snapCRC))
	_, _, err := Load(bytes.NewReader(v1), int64(len(v1)), dim, threshold, DefaultParams)
	if !errors.Is(err, ErrSnapshot) || !errors.Is(err, errSnapshotVersion) {
		t.Fatalf("version 1 snapshot: %v, want ErrSnapshot for its version", err)
	}
	if _, _, err := Load(bytes.NewReader(cur), int64(len(cur)), dim, threshold, DefaultParams); err != nil {
		t.Fatalf("the current snapshot it was made from: %v", err)
	}
}
