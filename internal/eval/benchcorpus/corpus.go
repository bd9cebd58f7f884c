// Package benchcorpus generates a deterministic synthetic corpus of agent
// memories (decisions, lessons, preferences, meetings, owners, follow-ups,
// metrics, bugs about projects, components, technologies and people) and a
// query set whose relevant memories are known exactly, so that search
// engines can be compared on speed and recall@k over the same data.
//
// Everything is a pure function of (seed, n): the same arguments give the
// same memories and queries on every machine, and the first k memories of
// Generate(seed, n) are Generate(seed, k) for any n ≥ k.
//
// Relevance is defined by facts, not by an engine: every memory records the
// attribute words it states (Keys, e.g. "project:aurora"), each query is
// built from three facts of one target memory, and its gold set is every
// memory that states all three. The attribute vocabularies are disjoint
// from each other and from the filler text, so a gold memory is exactly one
// whose text contains the three words.
package benchcorpus

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// Memory is one synthetic memory item.
type Memory struct {
	// Topic is unique per memory, so that each one can be published as its
	// own addressable snow:memory:<topic> event:
	// project/<project>/<component>/<category>-<base36 index>.
	Topic     string
	Content   string   // plain text, one or two sentences (about 24 words on average)
	CreatedAt int64    // unix seconds, increasing with the index, in 2024
	Keys      []string // sorted attribute facts: "component:x", "person:x", "project:x", "tech:x"
}

// Key returns the value of m's first key of the given kind ("project",
// "component", "person", "tech"), or "".
func (m Memory) Key(kind string) string {
	for _, k := range m.Keys {
		if v, ok := strings.CutPrefix(k, kind+":"); ok {
			return v
		}
	}
	return ""
}

// BaseTime is the created_at of memory 0: 2024-01-01T00:00:00Z.
const BaseTime = 1704067200

// Generate returns n memories for seed.
func Generate(seed int64, n int) []Memory {
	r := rand.New(rand.NewSource(seed))
	// Zipf-skewed choices: a few projects, people and tools come up all the
	// time, most rarely, as in a real team's memory.
	g := &gen{
		r:         r,
		person:    rand.NewZipf(r, 1.07, 4, uint64(len(people)-1)),
		project:   rand.NewZipf(r, 1.07, 4, uint64(len(projects)-1)),
		component: rand.NewZipf(r, 1.05, 8, uint64(len(components)-1)),
		tech:      rand.NewZipf(r, 1.05, 6, uint64(len(techs)-1)),
	}
	out := make([]Memory, n)
	at := int64(BaseTime)
	for i := range out {
		g.keys = g.keys[:0]
		t := templates[r.Intn(len(templates))]
		var b strings.Builder
		b.WriteString(t.write(g))
		if r.Intn(2) == 0 {
			b.WriteString(" ")
			b.WriteString(g.pick(contexts))
		}
		at += 30 + int64(r.Intn(120))
		keys := append([]string(nil), g.keys...)
		sort.Strings(keys)
		keys = dedupe(keys)
		out[i] = Memory{
			Topic:     fmt.Sprintf("project/%s/%s/%s-%s", g.proj, g.comp, t.category, strconv.FormatInt(int64(i), 36)),
			Content:   b.String(),
			CreatedAt: at,
			Keys:      keys,
		}
	}
	return out
}

type gen struct {
	r                                *rand.Rand
	person, project, component, tech *rand.Zipf
	keys                             []string
	proj, comp                       string // of the memory being written
}

func (g *gen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

func (g *gen) key(kind, v string) { g.keys = append(g.keys, kind+":"+v) }

// Project and component come first in every template: they name the topic.
func (g *gen) Project() string {
	g.proj = projects[g.project.Uint64()]
	g.key("project", g.proj)
	return title(g.proj)
}

func (g *gen) Component() string {
	g.comp = components[g.component.Uint64()][0]
	g.key("component", g.comp)
	return g.comp
}

// Person returns a person not yet named in this memory.
func (g *gen) Person() string {
	p := people[g.person.Uint64()]
	for g.hasKey("person:" + p) {
		p = people[g.person.Uint64()]
	}
	g.key("person", p)
	return title(p)
}

// Tech returns a technology not yet named in this memory.
func (g *gen) Tech() string {
	t := techs[g.tech.Uint64()]
	for g.hasKey("tech:" + t) {
		t = techs[g.tech.Uint64()]
	}
	g.key("tech", t)
	return t
}

func (g *gen) hasKey(k string) bool {
	for _, x := range g.keys {
		if x == k {
			return true
		}
	}
	return false
}

type template struct {
	category string
	write    func(g *gen) string
}

// Each template fixes the order in which it draws, so a memory depends only
// on the random stream.
var templates = []template{
	{"decisions", func(g *gen) string {
		proj, comp, p := g.Project(), g.Component(), g.Person()
		t1, t2 := g.Tech(), g.Tech()
		return fmt.Sprintf("Decided with %s to move the %s %s from %s to %s because %s.", p, proj, comp, t1, t2, g.pick(reasons))
	}},
	{"lessons", func(g *gen) string {
		proj, comp, t := g.Project(), g.Component(), g.Tech()
		return fmt.Sprintf("Lesson from the %s %s on %s: the %s %s when %s %s. Next time, %s.",
			proj, g.pick(incidents), title(g.pick(weekdays)), comp, g.pick(failures), t, g.pick(conditions), g.pick(fixes))
	}},
	{"preferences", func(g *gen) string {
		proj, comp, p, t := g.Project(), g.Component(), g.Person(), g.Tech()
		return fmt.Sprintf("%s prefers %s for changes to the %s %s, and wants %s numbers before anything is merged.", p, g.pick(styles), proj, comp, t)
	}},
	{"meetings", func(g *gen) string {
		proj, comp, p1, p2, t := g.Project(), g.Component(), g.Person(), g.Person(), g.Tech()
		return fmt.Sprintf("Meeting with %s and %s about %s on %s: agreed to %s the %s on %s by %s.",
			p1, p2, proj, title(g.pick(weekdays)), g.pick(actions), comp, t, title(g.pick(months)))
	}},
	{"owners", func(g *gen) string {
		proj, comp, p, t := g.Project(), g.Component(), g.Person(), g.Tech()
		return fmt.Sprintf("%s owns the %s of %s; ask on %s before touching its %s setup.", p, comp, proj, g.pick(channels), t)
	}},
	{"followups", func(g *gen) string {
		proj, comp, p, t := g.Project(), g.Component(), g.Person(), g.Tech()
		return fmt.Sprintf("Follow up with %s: the %s %s still depends on %s, %s.", p, proj, comp, t, g.pick(followups))
	}},
	{"metrics", func(g *gen) string {
		proj, comp, t, p := g.Project(), g.Component(), g.Tech(), g.Person()
		return fmt.Sprintf("The %s %s handles %d requests per second on %s since the %s tuning; %s measured it.",
			proj, comp, 100+g.r.Intn(9000), t, title(g.pick(months)), p)
	}},
	{"bugs", func(g *gen) string {
		proj, comp, t, p := g.Project(), g.Component(), g.Tech(), g.Person()
		return fmt.Sprintf("Bug in %s: the %s %s under %s %d.%d; %s has a patch and wants to %s.",
			proj, comp, g.pick(failures), t, 1+g.r.Intn(4), g.r.Intn(20), p, g.pick(fixes))
	}},
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
