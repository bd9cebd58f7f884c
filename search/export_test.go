package search

// WaitVectorGraph blocks until ix's vector graph, if it has one, has linked
// every complete batch of vectors (benchmarks in package search_test).
func WaitVectorGraph(ix *Index) { graphWait(ix) }
