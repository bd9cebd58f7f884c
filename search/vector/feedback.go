package vector

// Toward is Rocchio's relevance feedback on vectors: q moved toward the
// mean of fb by beta, then normalised. The query's own words find the
// first hits; their mean points at what the hits are about, so the
// neighbours of that mean are turns about the same thing said in other
// words (search/feedback.go does the same for keywords). q is not
// changed; with no feedback vectors the result is q.
func Toward(q []float32, fb [][]float32, beta float64) []float32 {
	if beta <= 0 || len(fb) == 0 {
		return q
	}
	out := make([]float32, len(q))
	copy(out, q)
	w := float32(beta / float64(len(fb)))
	for _, v := range fb {
		if len(v) != len(q) {
			return q // another embedder's vector: no feedback rather than a wrong one
		}
		for i, x := range v {
			out[i] += w * x
		}
	}
	Normalize(out)
	return out
}
