// Package agent will hold the resident agent (DESIGN.md §5): per-person and
// per-group memory in RAM, ring buffers, dynamic config, context assembly
// and persistence back to the relay. The relay already creates its key
// (<data>/agent.key) and reserves the snowclaw:memory:* namespaces for it.
package agent
