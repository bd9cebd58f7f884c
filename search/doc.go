// Package search is the memory search engine of DESIGN.md §4.
//
// An Index keeps docs (derived from stored events) in two bleve indexes
// ranked with BM25: one on disk, and one in RAM for volatile docs
// (decrypted private and internal memories, which must never reach the
// disk). Next to bleve it keeps a vector per doc, made by an Embedder (a
// built-in feature-hashing one by default), and searches them behind a
// small interface so an approximate index can replace the brute-force scan.
//
// A search fuses the BM25 and vector lists by weighted reciprocal rank,
// lets messages in a group chat lend part of their score to their
// neighbours, multiplies by the trust of the source and model tier, the
// stated confidence and an optional recency decay, hides old versions and
// applies the caller's Accept filter before the limit. ParseQuery splits a
// NIP-50 search string into free text and key:value extensions.
//
// Everything here is derived data: when Open reports ErrNeedsRebuild the
// relay wipes the directory and rebuilds from its events.
package search
