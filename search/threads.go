package search

import "strconv"

// threadKey is "" for docs that are not part of a message stream:
// addressable records (memories, profiles) stand alone.
func threadKey(d *Doc) string {
	if d.D != "" || d.Group == "" {
		return ""
	}
	return strconv.Itoa(d.Kind) + "/" + d.Group
}
