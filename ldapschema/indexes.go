package ldapschema

import (
	"fmt"
	"strings"
)

// entryDN is the operational attribute holding an entry's own DN, and
// dnOneLevelMatch the OpenLDAP matching rule that asserts an entry is an
// immediate child of a DN.
const (
	AttrEntryDN = "entryDN"
	// AttrEntryCSN is the operational attribute slapd changes on every
	// write of an entry (its change sequence number).
	AttrEntryCSN    = "entryCSN"
	MatchDNOneLevel = "dnOneLevelMatch"
	// AttrNamingContexts is the root DSE attribute that lists a server's
	// naming contexts, the suffixes of its databases (RFC 4512 5.1).
	AttrNamingContexts = "namingContexts"
)

// Index is one slapd equality index cpactl's searches need.
type Index struct {
	Attrs []string
	Kind  string // "eq"
	Why   string
}

// Indexes lists the indexes cpactl's searches need. Without them back-mdb
// evaluates a filter on every candidate of its scope: the session search
// of one resolve then reads all 250,000 sessions of a CPA-maximum
// federation, and a delete's referrer check reads the whole directory.
// Every filter cpactl sends is one of objectClass, a name (cn, uid) or a
// reference (a DN-valued attribute) compared for equality, so equality
// indexes on those are all it needs. entryDN needs none: back-mdb answers
// entryDN matches from its DN index.
func Indexes() []Index {
	refs := ReferenceAttributes()
	return []Index{
		{Attrs: []string{AttrObjectClass}, Kind: "eq", Why: "every search names the object class it reads"},
		{Attrs: []string{AttrCN, AttrUID}, Kind: "eq", Why: "objects are found by name"},
		{Attrs: refs, Kind: "eq", Why: "sessions, assignments and home-site rows by user, group and entitlement; members; referrers of a delete or rename"},
	}
}

// IndexesConf renders Indexes as slapd.conf lines for the database.
func IndexesConf() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Indexes for cpactl's searches (%s).\n", generatedNote)
	b.WriteString("# Add to the database section of slapd.conf, then run slapindex with slapd stopped.\n")
	b.WriteString("# For cn=config, see `cpactl schema print --format indexes-ldif`.\n")
	for _, ix := range Indexes() {
		fmt.Fprintf(&b, "# %s\nindex %s %s\n", ix.Why, strings.Join(ix.Attrs, ","), ix.Kind)
	}
	return b.String()
}

// IndexesLDIF renders Indexes as an ldapmodify change of the database's
// olcDbIndex under cn=config (slapd builds new indexes in the background).
func IndexesLDIF(databaseDN string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Indexes for cpactl's searches (%s).\n", generatedNote)
	b.WriteString("# ldapmodify -Y EXTERNAL -H ldapi:/// -f FILE; find the database's DN with\n")
	b.WriteString("# ldapsearch -Y EXTERNAL -H ldapi:/// -b cn=config '(olcSuffix=*)' dn olcSuffix\n")
	fmt.Fprintf(&b, "dn: %s\nchangetype: modify\nadd: olcDbIndex\n", databaseDN)
	for _, ix := range Indexes() {
		fmt.Fprintf(&b, "olcDbIndex: %s %s\n", strings.Join(ix.Attrs, ","), ix.Kind)
	}
	b.WriteString("-\n")
	return b.String()
}

// ReferenceAttributes lists the DN-valued attributes through which one
// entry refers to another: member and cpactl's own DN attributes.
func ReferenceAttributes() []string {
	out := []string{AttrMember}
	for _, a := range Attributes {
		if a.Syntax == DN {
			out = append(out, a.Name)
		}
	}
	return out
}
