package generate

import (
	"fmt"
	"strconv"
)

// Names of generated objects. Every name is a function of the object's
// index (and of its pod or farm), unique within its kind across the
// federation, and at most 64 characters. A few carry what real names do:
// non-ASCII letters (Zürich, São Paulo, user names) and the LDAP specials
// , + " \ < > ; = * ( ), so that escaping is exercised everywhere.

// siteNames are the first sites; later ones repeat them with a number.
var siteNames = []struct{ name, code string }{
	{"London", "lon"}, {"New York", "nyc"}, {"Zürich", "zrh"}, {"Bangalore", "blr"}, {"Tokyo", "tyo"},
	{"Sydney", "syd"}, {"São Paulo", "gru"}, {"Toronto", "yyz"}, {"Paris", "par"}, {"Singapore", "sin"},
	{"Dallas", "dfw"}, {"Frankfurt", "fra"}, {"Johannesburg", "jnb"}, {"Dubai", "dxb"}, {"Seoul", "sel"},
	{"Madrid", "mad"}, {"Chicago", "chi"}, {"Mumbai", "bom"}, {"Stockholm", "sto"}, {"Mexico City", "mex"},
}

func siteName(i int) (name, code string) {
	s := siteNames[i%len(siteNames)]
	if round := i / len(siteNames); round > 0 {
		return fmt.Sprintf("%s %d", s.name, round+1), fmt.Sprintf("%s%d", s.code, round+1)
	}
	return s.name, s.code
}

// tagNames are the Connection Server restriction tags.
var tagNames = []string{"internal", "external", "dmz", "partner", "contractors", "kiosk"}

// desktopThemes and applicationThemes name entitlements (with a number).
var desktopThemes = []string{
	"Finance Desktops", "Engineering Workstations", "Call Center Desktops", `R&D "Lab" Desktops`,
	"Sales, EMEA Desktops", "Developer VMs", "Clinical Desktops", "Trading Floor <Tier 1>", "Student Labs",
	"Back\\Office Desktops", "Design (GPU) Desktops", "Kiosk Desktops",
}

var applicationThemes = []string{
	"Office Apps", "SAP GUI", "Payroll; HR Apps", "CAD Viewers", "A+B Testing Apps", "EHR Client",
	"Trading Tools", "Billing = Invoicing", "Browser *Secure*", "Legacy ERP",
}

// firstNames and lastNames make user names; the second form is the ASCII
// one used in the uid.
var firstNames = [][2]string{
	{"Alice", "alice"}, {"Bob", "bob"}, {"Carol", "carol"}, {"Dave", "dave"}, {"Erin", "erin"},
	{"Frank", "frank"}, {"Grace", "grace"}, {"Heidi", "heidi"}, {"Ivan", "ivan"}, {"Judy", "judy"},
	{"Mallory", "mallory"}, {"Niaj", "niaj"}, {"Olivia", "olivia"}, {"Peggy", "peggy"}, {"Rupert", "rupert"},
	{"Sybil", "sybil"}, {"Trent", "trent"}, {"Victor", "victor"}, {"Walter", "walter"}, {"Priya", "priya"},
	{"José", "jose"}, {"Zoë", "zoe"}, {"Søren", "soren"}, {"Chloé", "chloe"}, {"Hiroshi", "hiroshi"},
	{"Aiko", "aiko"}, {"Mateus", "mateus"}, {"Fatima", "fatima"}, {"Lars", "lars"}, {"Amara", "amara"},
}

var lastNames = [][2]string{
	{"Martin", "martin"}, {"Smith", "smith"}, {"Jones", "jones"}, {"Brown", "brown"}, {"Wu", "wu"},
	{"Patel", "patel"}, {"García", "garcia"}, {"Müller", "muller"}, {"Nakamura", "nakamura"}, {"Silva", "silva"},
	{"Dubois", "dubois"}, {"Kowalski", "kowalski"}, {"O'Brien", "obrien"}, {"Nguyen", "nguyen"}, {"Kim", "kim"},
	{"Rossi", "rossi"}, {"Johansson", "johansson"}, {"Okafor", "okafor"}, {"Cohen", "cohen"}, {"Singh", "singh"},
	{"Fernández", "fernandez"}, {"Novak", "novak"}, {"Tanaka", "tanaka"}, {"Haddad", "haddad"}, {"Larsen", "larsen"},
}

// width returns the number of digits of n-1 (at least 2), so that numbered
// names of one kind have the same length and sort in order.
func width(n int) int {
	w := len(strconv.Itoa(n - 1))
	if w < 2 {
		w = 2
	}
	return w
}

func numbered(prefix string, i, w int) string { return fmt.Sprintf("%s%0*d", prefix, w, i) }
