// Package dynconfig holds the agent's dynamic configuration
// (docs/events.md#dynamic-config): kind 30078 events that the owner publishes under
// snowclaw:config:global, snowclaw:config:group:<id> and
// snowclaw:config:npub:<npub>, layered per field over the config file and the
// built-in defaults. The relay is the store; this package only keeps the
// newest patch per scope in memory and resolves the effective settings.
package dynconfig
