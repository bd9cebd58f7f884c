package benchcorpus

import "strings"

// The attribute vocabularies. A memory's Keys name the attribute words its
// text contains; every list is disjoint from the others and from the filler
// phrases, so "memory m contains word w" and "w is one of m's Keys" are the
// same thing, which is what makes the gold sets exact.

var people = strings.Fields(`amara bjorn chiara dmitri elif farah goran hana ingrid jonas
kenji leila mateo nadia oskar priya quentin rafael sana tomas ulla viktor wen
xenia yusuf zofia anika bruno camille darius esme felix greta hugo ilse jasper
kaito linnea marek noor odile pavel rania soren talia umar vera wiebke yara
zeno aiko beatriz cyrus dagny emre fiona gideon helga idris jovana kasper lucia
milos nia orla pietro rosalind stellan tuva vadim willa ximena yohan zuzana
anselm bettina cosmin delia eitan fenna gunnar halima ivo janne kirra lorenzo
mirela nils ottilie renske sefa teodor valeska wolfram yasmin zlatan agnieszka
bogdan cressida dorota eero fatima gaspard henrike imre jolene kofi lavinia`)

var projects = strings.Fields(`aurora basalt cobalt ember fjord glacier halcyon indigo
juniper kestrel lumen magpie nimbus obsidian pelican quartz raven sierra tundra
umber vesper willow xylem yarrow zephyr alder bramble cinder driftwood egret
falcon granite heron jasmine kelp lichen marlin nettle osprey pumice quince rook
saffron thistle urchin vireo wren yew zinnia acorn canyon eclipse fennel garnet
ibis jetty kiln lagoon meadow orchid prism quarry reef sable talon upland vortex
walrus yucca zircon anvil bison cedar dune estuary flint gecko inlet jackal
larch mistral narwhal ocelot plover quill sparrow tamarack umbra wharf zodiac
albatross bittern cormorant dolomite fulmar gannet hornbill kittiwake`)

// components are written in memories in the first form; "variant" queries
// use the second, which shares the first's Porter stem but not its spelling.
var components = [][2]string{
	{"billing", "bills"}, {"invoices", "invoicing"}, {"payments", "payment"},
	{"notifications", "notification"}, {"scheduler", "scheduling"}, {"uploads", "uploading"},
	{"exports", "exporter"}, {"onboarding", "onboard"}, {"checkout", "checkouts"},
	{"permissions", "permission"}, {"webhooks", "webhook"}, {"thumbnails", "thumbnail"},
	{"subscriptions", "subscription"}, {"backups", "backup"}, {"analytics", "analytic"},
	{"recommendations", "recommender"}, {"translations", "translation"}, {"ingestion", "ingest"},
	{"renderer", "rendering"}, {"tokenizer", "tokenizing"}, {"encoder", "encoding"},
	{"importer", "imports"}, {"authentication", "authenticating"}, {"geocoder", "geocoding"},
	{"archiving", "archives"}, {"emails", "emailing"}, {"ledger", "ledgers"},
	{"inventory", "inventories"}, {"dashboards", "dashboard"}, {"comments", "commenting"},
	{"moderation", "moderating"}, {"transcoder", "transcoding"}, {"pricing", "prices"},
	{"refunds", "refunding"}, {"ranking", "ranked"}, {"sessions", "session"},
	{"sitemap", "sitemaps"}, {"payroll", "payrolls"}, {"chatbot", "chatbots"},
	{"workflows", "workflow"}, {"templates", "templating"}, {"compression", "compressing"},
	{"replication", "replicating"}, {"sharding", "shards"}, {"alerting", "alerts"},
	{"localization", "localizing"}, {"forecasting", "forecasts"}, {"matchmaking", "matchmaker"},
	{"bookings", "booking"}, {"receipts", "receipt"}, {"coupons", "coupon"},
	{"avatars", "avatar"}, {"previews", "previewing"}, {"transcripts", "transcript"},
	{"captions", "captioning"}, {"reminders", "reminder"}, {"calendars", "calendar"},
	{"attachments", "attachment"}, {"settlement", "settlements"}, {"ratings", "rating"},
	{"deduplication", "deduplicating"}, {"enrichment", "enriching"}, {"clustering", "clusters"},
	{"embeddings", "embedding"}, {"quotas", "quota"},
}

var techs = strings.Fields(`postgres mysql sqlite redis memcached kafka rabbitmq nats
badger rocksdb leveldb cassandra scylla clickhouse duckdb elasticsearch opensearch
meilisearch typesense bleve tantivy lucene kubernetes nomad terraform ansible
docker podman nginx caddy envoy haproxy traefik grpc graphql protobuf avro
parquet flink airflow dagster celery sidekiq consul etcd zookeeper prometheus
grafana jaeger sentry datadog honeycomb opentelemetry cloudflare fastly minio
ceph tigerbeetle webassembly golang python typescript deno elixir erlang kotlin
react svelte htmx tailwind vite webpack esbuild pnpm libsodium wireguard
tailscale openssl argon2 bcrypt oauth webauthn stripe twilio sendgrid mailgun
ollama pytorch onnx faiss qdrant pgvector`)

// Filler: the words every kind of memory shares. None of them is an
// attribute word (checked by the package test).
var (
	weekdays = strings.Fields(`monday tuesday wednesday thursday friday`)
	months   = strings.Fields(`january february march april may june july august september october november december`)
	reasons  = []string{
		"the old servers kept running out of disk",
		"latency doubled during the evening peak",
		"the license changed and legal asked us to move",
		"nobody on the team wanted to maintain the old setup",
		"the hosted plan became too expensive",
		"we needed better support for transactions",
		"operations asked for fewer moving parts",
		"the previous version had no active maintainers",
		"memory use grew without bound under load",
		"cold starts were far too slow for customers",
		"the migration tooling was finally good enough",
		"we kept losing writes after failovers",
		"security review flagged the old driver",
		"it simplifies development on laptops a lot",
		"the vendor ended support for our region",
		"queries over large tenants took minutes",
		"it was the only option that passed the load test",
		"the team already knows it well",
	}
	incidents = strings.Fields(`outage incident postmortem rollback regression escalation`)
	failures  = []string{
		"timed out", "leaked connections", "dropped writes", "ran out of file handles",
		"returned stale results", "deadlocked", "crashed on startup", "double counted events",
		"ignored retries", "filled the disk with temporary files", "spiked to full cpu",
		"lost messages during restarts", "served partial pages", "rejected valid logins",
	}
	conditions = []string{
		"was upgraded without a maintenance window", "hit its connection limit",
		"restarted in the middle of a batch", "ran with default settings",
		"shared a host with the batch jobs", "saw a burst of traffic from one tenant",
		"was configured with a tiny buffer", "lost its network for a few seconds",
	}
	fixes = []string{
		"pin the client version and add a canary", "add a circuit breaker in front of it",
		"batch the writes and retry with backoff", "split the workload into two pools",
		"raise the limits and add an alarm", "move the heavy jobs to the night window",
		"drop the cache and read through instead", "add an integration test that reproduces it",
	}
	styles = []string{
		"small pull requests", "written design notes", "pair programming",
		"async reviews", "a short call first", "feature flags", "detailed changelogs",
	}
	actions   = strings.Fields(`replace rewrite benchmark retire harden document audit simplify`)
	followups = []string{
		"which blocks the next release", "so the upgrade has to wait",
		"and nobody has an estimate yet", "which costs us every month",
		"though a replacement is planned", "and the contract renews soon",
	}
	contexts = []string{
		"This came up again during quarterly planning.",
		"Worth checking before the next release.",
		"The team agreed on this in the weekly sync.",
		"Keep this in mind when estimating related work.",
		"Numbers are from the staging environment.",
		"There is a longer write-up in the shared drive.",
		"Nobody objected when this was discussed.",
		"Revisit this once the hiring round is over.",
		"It was mentioned twice in the retro.",
		"Customers noticed this before we did.",
	}
	channels = strings.Fields(`chat phone standup`)
)

// questionForms turn a project, a component and a third attribute word
// into a natural question. %[1]s is the project, %[2]s the component,
// %[3]s the tech or person. Forms marked person only fit a person.
var questionForms = []struct {
	format string
	person bool
}{
	{"what did we decide about the %[2]s in %[1]s and %[3]s?", false},
	{"why does %[1]s use %[3]s for the %[2]s?", false},
	{"anything about %[3]s in the %[1]s %[2]s?", false},
	{"what happened with %[1]s's %[2]s and %[3]s", false},
	{"what did %[3]s say about the %[1]s %[2]s?", true},
	{"%[3]s's notes on %[2]s for %[1]s", true},
	{"who talked with %[3]s about the %[2]s of %[1]s?", true},
}
