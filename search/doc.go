// Package search will hold the memory search engine (DESIGN.md §4): BM25
// through bleve fused with vector similarity, trust-weighted ranking and
// NIP-50 query parsing. Until it lands the relay refuses search filters
// with "unsupported:" rather than answering them unranked.
package search
