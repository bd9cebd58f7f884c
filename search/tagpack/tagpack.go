// Package tagpack keeps an indexed doc's tags in one flat slice instead of
// a map. A map of a memory's two or three tags costs about 370 bytes of
// heap (buckets, a slice header per name, a copy of each name and value
// made by the doc log's decoder); the same tags as name, value, name,
// value … in one slice cost a slice header and 32 bytes a tag, and with
// the names and repeating values shared (Pack's intern) no string bytes
// of their own. At a million memories that is about 300 MB of the index's
// heap.
package tagpack

import "sort"

// Pack flattens tags into name, value pairs in name order (values in
// their order), so the same map always packs the same. A "d" value equal
// to d reuses d's bytes, since the doc holds it already; intern (may be
// nil) is given every name and the values of names for which shared
// reports true, whose values repeat across docs (t tags: categories).
func Pack(tags map[string][]string, d string, intern func(string) string, shared func(name string) bool) []string {
	if len(tags) == 0 {
		return nil
	}
	names := make([]string, 0, len(tags))
	n := 0
	for k, vs := range tags {
		names = append(names, k)
		n += len(vs)
	}
	sort.Strings(names)
	out := make([]string, 0, 2*n)
	for _, k := range names {
		ik := k
		if intern != nil {
			ik = intern(k)
		}
		for _, v := range tags[k] {
			switch {
			case k == "d" && v == d:
				v = d
			case intern != nil && shared != nil && shared(k):
				v = intern(v)
			}
			out = append(out, ik, v)
		}
	}
	return out
}

// Unpack is the map Pack was given (nil for none).
func Unpack(p []string) map[string][]string {
	if len(p) == 0 {
		return nil
	}
	m := make(map[string][]string)
	for i := 0; i+1 < len(p); i += 2 {
		m[p[i]] = append(m[p[i]], p[i+1])
	}
	return m
}

// Values are the values of the tags named name, in order (nil for none).
func Values(p []string, name string) []string {
	var out []string
	for i := 0; i+1 < len(p); i += 2 {
		if p[i] == name {
			out = append(out, p[i+1])
		}
	}
	return out
}
