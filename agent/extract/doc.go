// Package extract is what the agent learns from conversation with a model's
// help: durable facts, preferences, decisions, plans and events pulled out
// of a batch of messages (Extract), the choice between adding, updating or
// ignoring each against the memories it resembles (Decide), and summaries
// of old conversation (Summarize). Every call goes through one Learner,
// which holds the hourly call budget, runs the sanitizer over everything
// sent, asks for JSON under a schema (Ollama's `format`), checks the answer
// against that schema, retries a broken answer once and counts the cost.
//
// It knows nothing of events, tiers or stores: the agent decides where a
// candidate may live and writes it.
package extract
