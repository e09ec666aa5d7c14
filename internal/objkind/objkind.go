// Package objkind spells each kind of object once: the word that messages,
// findings, plans and errors use for a site, a pod, a home-site row, ...
// (directory, lint, reconcile, broker, impact, horizon and commands all take
// it from here; issue 24's "one word per thing").
package objkind

// The kinds of objects cpactl names.
const (
	Settings         = "settings"
	Site             = "site"
	Pod              = "pod"
	ConnectionServer = "connection server"
	Pool             = "pool"
	Farm             = "farm"
	Host             = "rds host"
	Entitlement      = "entitlement"
	HomeSiteRow      = "home-site row"
	User             = "user"
	Group            = "group"
	Computer         = "computer"
	Session          = "session"
	Assignment       = "pod assignment"
	RoleGroup        = "role group"
	Entry            = "entry"
	Base             = "base entry"
	Container        = "container"
)
