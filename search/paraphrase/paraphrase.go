// Package paraphrase is a retrieval test of search by meaning: queries
// written by hand, each with the one memory it asks for, which shares no
// word with it once both are analysed as the index analyses them, hidden
// among thousands of unrelated memories made from templates. Keyword
// search cannot find them; only an embedder that knows what words mean
// can (`snowclaw eval paraphrase`, docs/search-tuning.md).
package paraphrase

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"
)

//go:embed pairs.txt
var pairsText string

// Pair is a query and the memory it asks for.
type Pair struct {
	Query, Memory string
}

// Pairs are the hand-written pairs, in file order.
func Pairs() []Pair {
	var out []Pair
	for _, line := range strings.Split(pairsText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, m, ok := strings.Cut(line, " | ")
		if !ok {
			panic("paraphrase: pairs.txt: no \" | \" in " + line)
		}
		out = append(out, Pair{Query: strings.TrimSpace(q), Memory: strings.TrimSpace(m)})
	}
	return out
}

// Distractors are n distinct memories about other things, the same n
// for the same seed: project and operations notes, orders, sports
// results, facts about places, elements and history, public events,
// people's settings and errands. They read like what an agent keeps, and
// answer none of the queries.
func Distractors(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	templates := []func() string{
		func() string {
			return fmt.Sprintf("The %s %s was upgraded to version %d.%d on %s.", pick(services), pick(components), 1+r.IntN(9), r.IntN(20), pick(weekdays))
		},
		func() string {
			return fmt.Sprintf("%s has about %d hundred thousand inhabitants and lies %s.", pick(cities), 1+r.IntN(40), pick(settings))
		},
		func() string {
			a, b := pick(clubs), pick(clubs)
			for b == a {
				b = pick(clubs)
			}
			return fmt.Sprintf("%s beat %s %d-%d in the %s %s.", a, b, 1+r.IntN(5), r.IntN(3), pick(competitions), pick(rounds))
		},
		func() string {
			return fmt.Sprintf("Order %d of %d %s left the %s warehouse on %s.", 10000+r.IntN(90000), 2+r.IntN(500), pick(items), pick(cities), pick(weekdays))
		},
		func() string {
			e := r.IntN(len(elements))
			return fmt.Sprintf("%s, element %d, is used in %s.", elements[e], e+1, pick(uses))
		},
		func() string {
			return fmt.Sprintf("%s sets up %s with the %s theme and %d-space indentation.", pick(names), pick(editors), pick(themes), 2+2*r.IntN(2))
		},
		func() string {
			return fmt.Sprintf("The %s of %s happened in %d.", pick(historic), pick(cities), 1200+r.IntN(800))
		},
		func() string {
			return fmt.Sprintf("Ticket %d says the %s export times out for accounts over %d rows.", 100+r.IntN(9900), pick(reports), 1000*(1+r.IntN(900)))
		},
		func() string {
			d := 1 + r.IntN(20)
			return fmt.Sprintf("The %s %s runs from %s %d to %d.", pick(cities), pick(festivals), pick(months), d, d+1+r.IntN(8))
		},
		func() string {
			return fmt.Sprintf("%s renewed the %s certificate for the %s domain until %s.", pick(names), pick(certs), pick(services), pick(months))
		},
		func() string {
			return fmt.Sprintf("The %s %s reading was %d on %s.", pick(cities), pick(sensors), 10+r.IntN(990), pick(weekdays))
		},
		func() string {
			return fmt.Sprintf("%s returned the %s to the %s library branch.", pick(names), pick(loans), pick(cities))
		},
	}
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		s := templates[r.IntN(len(templates))]()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

var (
	services     = strings.Fields("billing search auth reporting checkout inventory analytics notification payroll scheduling ledger archive")
	components   = []string{"database", "cache", "queue", "gateway", "scheduler", "web frontend", "worker pool", "load balancer", "message broker", "object store"}
	weekdays     = strings.Fields("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
	months       = strings.Fields("January February March April May June July August September October November December")
	cities       = strings.Fields("Porto Valencia Antwerp Gdansk Brno Turin Seville Utrecht Graz Bergen Tampere Malmo Aarhus Cork Leipzig Lyon Bilbao Krakow Ljubljana Zagreb Riga Tallinn Vilnius Bratislava Debrecen Plovdiv Thessaloniki Izmir Haifa Tunis Rabat Dakar Accra Nairobi Kampala Lusaka Harare Durban Recife Cordoba Rosario Valparaiso Medellin Quito Cusco Monterrey Tucson Omaha Halifax Winnipeg")
	settings     = []string{"on a wide river", "on the coast", "in a mountain valley", "on a plateau", "beside a large lake", "at the mouth of an estuary", "on a chain of islands", "at the edge of a desert"}
	clubs        = strings.Fields("Rovers Athletic United Wanderers Albion Rangers Thistle Harriers Vale Dynamo Sporting Olympic Racing Real Inter Lokomotiv")
	competitions = []string{"league", "cup", "shield", "trophy", "championship"}
	rounds       = []string{"quarter-final", "semi-final", "final", "first round", "second round", "group stage", "replay"}
	items        = []string{"steel brackets", "copper fittings", "ceramic tiles", "oak panels", "cable reels", "solar modules", "glass jars", "fan belts", "printer drums", "circuit boards", "rubber seals", "pallet wraps"}
	elements     = strings.Fields("Hydrogen Helium Lithium Beryllium Boron Carbon Nitrogen Oxygen Fluorine Neon Sodium Magnesium Aluminium Silicon Phosphorus Sulfur Chlorine Argon Potassium Calcium Scandium Titanium Vanadium Chromium Manganese Iron Cobalt Nickel Copper Zinc Gallium Germanium Arsenic Selenium Bromine Krypton")
	uses         = []string{"alloys for aircraft", "semiconductors", "fertilisers", "lamps and signs", "batteries", "glassmaking", "water treatment", "pigments", "welding", "catalysts", "fireworks", "magnets"}
	names        = strings.Fields("Aisha Bruno Chiara Dmitri Esther Farid Greta Hiro Ines Jonas Kofi Lars Mateo Nadia Oskar Paloma Quentin Rosalind Stefan Thea Ugo Vera Wendell Ximena Yusuf Zara")
	editors      = []string{"Vim", "Emacs", "VS Code", "Sublime Text", "IntelliJ", "Helix", "Kate"}
	themes       = strings.Fields("solarized gruvbox monokai dracula nord zenburn")
	historic     = []string{"great fire", "siege", "flood", "founding", "charter", "first census", "cathedral consecration", "bridge collapse", "guild revolt", "harbour expansion"}
	reports      = []string{"quarterly revenue", "audit log", "churn", "invoice", "shipment", "usage", "tax summary", "timesheet"}
	festivals    = []string{"film festival", "book fair", "jazz week", "lantern festival", "craft market", "science fair", "folk festival", "design week"}
	certs        = []string{"TLS", "code signing", "wildcard", "client"}
	sensors      = []string{"air quality", "river level", "pollen count", "noise", "ozone", "humidity"}
	loans        = []string{"atlas", "encyclopedia volume", "sheet music", "microfilm reel", "field guide", "audiobook"}
)
