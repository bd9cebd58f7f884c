package memory

// Similarity is the word overlap of two texts (Jaccard over their
// normalized words without stop words, 0–1): what compaction takes for
// "says the same thing". Two texts of only stop words compare by
// normalized text.
func Similarity(a, b string) float64 {
	wa, wb := queryWords(a), queryWords(b)
	if len(wa) == 0 || len(wb) == 0 {
		if Normalize(a) == Normalize(b) {
			return 1
		}
		return 0
	}
	set := make(map[string]bool, len(wa))
	for _, w := range wa {
		set[w] = true
	}
	both := 0
	for _, w := range wb {
		if set[w] {
			both++
		}
	}
	return float64(both) / float64(len(wa)+len(wb)-both)
}
