// Package search is the memory search engine of docs/design.md "Search".
//
// An Index keeps docs (derived from stored events) in partitions by read
// scope (Doc.Scope, parts.go), each with its own BM25 inverted index in
// RAM (search/keyword, ranked by MaxScore), and next to them a vector per
// doc, made by an Embedder (the feature-hashing search/hashembed by default),
// searched by the vector sub-package: an
// exact scan up to 20k vectors, an HNSW graph beyond. On disk there is
// only a checksummed doc log of the non-volatile docs and their vectors,
// and after Close a snapshot of the vector graph (snapshot.go); volatile
// docs (decrypted private and internal memories) reach neither.
// A search ranks over the scopes its reader may read (Query.Readable) and
// nothing else: statistics, ranks and the priors never depend on a doc the
// reader may not read.
//
// The inverted index and BM25 are written here rather than taken from
// bleve (which still analyses the text: tokenizer, stop words, stemmer):
// statistics per read scope would need one bleve index per group and per
// person, thousands of them each with its own segments and goroutines,
// and bleve's alias gathers statistics across its members only for the
// scorer it knows. TestParts_BM25MatchesBleve pins our scores to bleve's
// on the same corpus, quirks included.
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
