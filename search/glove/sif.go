package glove

import "math"

// Word frequencies for SIF (Arora, Liang and Ma 2017, "A simple but
// tough-to-beat baseline for sentence embeddings"): a word weighs
// a/(a + p(w)), so the frequent words that every text shares weigh
// little. GloVe's files list words by frequency and say no more, so p(w)
// is Zipf's law over the source's ranks: p(rank) = 1/((rank+1) · H(n)),
// H(n) the n-th harmonic number, n the source's vocabulary.

// Prob is the Zipf estimate of a word's probability from its rank
// (0 = most frequent) in a vocabulary of n words.
func Prob(rank, n int) float64 {
	return 1 / (float64(rank+1) * harmonic(n))
}

// harmonic is H(n) ≈ ln n + γ + 1/(2n).
func harmonic(n int) float64 {
	return math.Log(float64(n)) + 0.5772156649 + 1/(2*float64(n))
}

// SIFWeight is a/(a + p) for a word of that rank among n.
func SIFWeight(a float64, rank, n int) float64 {
	return a / (a + Prob(rank, n))
}
