package ldapschema

// The standard object classes cpactl's entries use (from OpenLDAP's core,
// cosine and inetorgperson schemas, as slapd 2.5 publishes them in
// cn=Subschema) and the attribute types they and cpactl's classes name, with
// the equality each attribute's matching rule applies. `cpactl diff` and
// `cpactl apply` compare and write exactly these attributes and cpactl's
// own (Attributes); ldapschema's tests check both tables against a live
// slapd.

// Equality is how an attribute's EQUALITY matching rule compares values.
type Equality int

// Equality kinds.
const (
	// EqualityCaseIgnore: caseIgnoreMatch, caseIgnoreIA5Match and
	// caseIgnoreListMatch: case folded, leading, trailing and repeated
	// spaces ignored.
	EqualityCaseIgnore Equality = iota
	// EqualityDN: distinguishedNameMatch (ldapschema.NormalizeDN).
	EqualityDN
	// EqualityInteger: integerMatch, by numeric value.
	EqualityInteger
	// EqualityBoolean: booleanMatch (TRUE or FALSE).
	EqualityBoolean
	// EqualityTelephone: telephoneNumberMatch: case, spaces and hyphens
	// ignored.
	EqualityTelephone
	// EqualityNumericString: numericStringMatch: spaces ignored.
	EqualityNumericString
	// EqualityObjectIdentifier: objectIdentifierMatch on class names
	// (case-insensitive).
	EqualityObjectIdentifier
	// EqualityExact: caseExactMatch, octetStringMatch and the other exact
	// rules.
	EqualityExact
	// EqualityNone: the attribute has no equality rule; values compare
	// exactly and cannot be asserted in a filter.
	EqualityNone
)

// ClassAbstract is the kind of the abstract class top.
const ClassAbstract ClassKind = "ABSTRACT"

// StandardClass is a standard object class cpactl's entries use.
type StandardClass struct {
	Name string
	Kind ClassKind
	Sup  string // the superclass ("" for top)
	Must []string
	May  []string
}

// StandardAttribute is a standard attribute type: one named by a standard
// class above or by one of cpactl's classes.
type StandardAttribute struct {
	Name     string
	Aliases  []string // other names of the same type (commonName for cn)
	Equality Equality
	Single   bool // SINGLE-VALUE
	// Sensitive values (passwords) are never printed.
	Sensitive bool
}

// StandardClasses lists the standard classes of the layout (top,
// organizationalUnit, domain, dcObject, organization), of users (person,
// organizationalPerson, inetOrgPerson) and of client computers (device).
var StandardClasses = []StandardClass{
	{Name: ClassTop, Kind: ClassAbstract, Must: []string{AttrObjectClass}},
	{Name: ClassOrganizationalUnit, Kind: Structural, Sup: ClassTop, Must: []string{AttrOU}, May: []string{
		"userPassword", "searchGuide", "seeAlso", "businessCategory", "x121Address", "registeredAddress",
		"destinationIndicator", "preferredDeliveryMethod", "telexNumber", "teletexTerminalIdentifier",
		"telephoneNumber", "internationaliSDNNumber", "facsimileTelephoneNumber", "street", "postOfficeBox",
		"postalCode", "postalAddress", "physicalDeliveryOfficeName", "st", "l", AttrDescription,
	}},
	{Name: "domain", Kind: Structural, Sup: ClassTop, Must: []string{AttrDC}, May: []string{
		"associatedName", "o", AttrDescription, "businessCategory", "seeAlso", "searchGuide", "userPassword", "l",
		"st", "street", "physicalDeliveryOfficeName", "postalAddress", "postalCode", "postOfficeBox",
		"facsimileTelephoneNumber", "internationaliSDNNumber", "telephoneNumber", "teletexTerminalIdentifier",
		"telexNumber", "preferredDeliveryMethod", "destinationIndicator", "registeredAddress", "x121Address",
	}},
	{Name: ClassDCObject, Kind: Auxiliary, Sup: ClassTop, Must: []string{AttrDC}},
	{Name: ClassOrganization, Kind: Structural, Sup: ClassTop, Must: []string{"o"}, May: []string{
		"userPassword", "searchGuide", "seeAlso", "businessCategory", "x121Address", "registeredAddress",
		"destinationIndicator", "preferredDeliveryMethod", "telexNumber", "teletexTerminalIdentifier",
		"telephoneNumber", "internationaliSDNNumber", "facsimileTelephoneNumber", "street", "postOfficeBox",
		"postalCode", "postalAddress", "physicalDeliveryOfficeName", "st", "l", AttrDescription,
	}},
	{Name: "person", Kind: Structural, Sup: ClassTop, Must: []string{AttrSN, AttrCN}, May: []string{
		"userPassword", "telephoneNumber", "seeAlso", AttrDescription,
	}},
	{Name: "organizationalPerson", Kind: Structural, Sup: "person", May: []string{
		"title", "x121Address", "registeredAddress", "destinationIndicator", "preferredDeliveryMethod",
		"telexNumber", "teletexTerminalIdentifier", "telephoneNumber", "internationaliSDNNumber",
		"facsimileTelephoneNumber", "street", "postOfficeBox", "postalCode", "postalAddress",
		"physicalDeliveryOfficeName", AttrOU, "st", "l",
	}},
	{Name: ClassInetOrgPerson, Kind: Structural, Sup: "organizationalPerson", May: []string{
		"audio", "businessCategory", "carLicense", "departmentNumber", "displayName", "employeeNumber",
		"employeeType", "givenName", "homePhone", "homePostalAddress", "initials", "jpegPhoto", "labeledURI",
		"mail", "manager", "mobile", "o", "pager", "photo", "roomNumber", "secretary", AttrUID, "userCertificate",
		"x500UniqueIdentifier", "preferredLanguage", "userSMIMECertificate", "userPKCS12",
	}},
	{Name: ClassDevice, Kind: Structural, Sup: ClassTop, Must: []string{AttrCN}, May: []string{
		"serialNumber", "seeAlso", "owner", AttrOU, "o", "l", AttrDescription,
	}},
}

// StandardAttributes lists the attribute types of StandardClasses, and
// member (used by cpactl's group and entitlement classes).
var StandardAttributes = []StandardAttribute{
	{Name: "associatedName", Equality: EqualityDN},
	{Name: "audio", Equality: EqualityNone},
	{Name: "businessCategory", Equality: EqualityCaseIgnore},
	{Name: "carLicense", Equality: EqualityCaseIgnore},
	{Name: AttrCN, Aliases: []string{"commonName"}, Equality: EqualityCaseIgnore},
	{Name: AttrDC, Aliases: []string{"domainComponent"}, Equality: EqualityCaseIgnore, Single: true},
	{Name: "departmentNumber", Equality: EqualityCaseIgnore},
	{Name: AttrDescription, Equality: EqualityCaseIgnore},
	{Name: "destinationIndicator", Equality: EqualityCaseIgnore},
	{Name: "displayName", Equality: EqualityCaseIgnore, Single: true},
	{Name: "employeeNumber", Equality: EqualityCaseIgnore, Single: true},
	{Name: "employeeType", Equality: EqualityCaseIgnore},
	{Name: "facsimileTelephoneNumber", Aliases: []string{"fax"}, Equality: EqualityNone},
	{Name: "givenName", Aliases: []string{"gn"}, Equality: EqualityCaseIgnore},
	{Name: "homePhone", Aliases: []string{"homeTelephoneNumber"}, Equality: EqualityTelephone},
	{Name: "homePostalAddress", Equality: EqualityCaseIgnore},
	{Name: "initials", Equality: EqualityCaseIgnore},
	{Name: "internationaliSDNNumber", Equality: EqualityNumericString},
	{Name: "jpegPhoto", Equality: EqualityNone},
	{Name: "l", Aliases: []string{"localityName"}, Equality: EqualityCaseIgnore},
	{Name: "labeledURI", Equality: EqualityExact},
	{Name: "mail", Aliases: []string{"rfc822Mailbox"}, Equality: EqualityCaseIgnore},
	{Name: "manager", Equality: EqualityDN},
	{Name: AttrMember, Equality: EqualityDN},
	{Name: "mobile", Aliases: []string{"mobileTelephoneNumber"}, Equality: EqualityTelephone},
	{Name: "o", Aliases: []string{"organizationName"}, Equality: EqualityCaseIgnore},
	{Name: AttrObjectClass, Equality: EqualityObjectIdentifier},
	{Name: AttrOU, Aliases: []string{"organizationalUnitName"}, Equality: EqualityCaseIgnore},
	{Name: "owner", Equality: EqualityDN},
	{Name: "pager", Aliases: []string{"pagerTelephoneNumber"}, Equality: EqualityTelephone},
	{Name: "photo", Equality: EqualityNone},
	{Name: "physicalDeliveryOfficeName", Equality: EqualityCaseIgnore},
	{Name: "postalAddress", Equality: EqualityCaseIgnore},
	{Name: "postalCode", Equality: EqualityCaseIgnore},
	{Name: "postOfficeBox", Equality: EqualityCaseIgnore},
	{Name: "preferredDeliveryMethod", Equality: EqualityNone, Single: true},
	{Name: "preferredLanguage", Equality: EqualityCaseIgnore, Single: true},
	{Name: "registeredAddress", Equality: EqualityCaseIgnore},
	{Name: "roomNumber", Equality: EqualityCaseIgnore},
	{Name: "searchGuide", Equality: EqualityNone},
	{Name: "secretary", Equality: EqualityDN},
	{Name: "seeAlso", Equality: EqualityDN},
	{Name: "serialNumber", Equality: EqualityCaseIgnore},
	{Name: AttrSN, Aliases: []string{"surname"}, Equality: EqualityCaseIgnore},
	{Name: "st", Aliases: []string{"stateOrProvinceName"}, Equality: EqualityCaseIgnore},
	{Name: "street", Aliases: []string{"streetAddress"}, Equality: EqualityCaseIgnore},
	{Name: "telephoneNumber", Equality: EqualityTelephone},
	{Name: "teletexTerminalIdentifier", Equality: EqualityNone},
	{Name: "telexNumber", Equality: EqualityNone},
	{Name: "title", Equality: EqualityCaseIgnore},
	{Name: AttrUID, Aliases: []string{"userid"}, Equality: EqualityCaseIgnore},
	{Name: "userCertificate", Equality: EqualityExact},
	{Name: "userPassword", Equality: EqualityExact, Sensitive: true},
	{Name: "userPKCS12", Equality: EqualityNone},
	{Name: "userSMIMECertificate", Equality: EqualityNone},
	{Name: "x121Address", Equality: EqualityNumericString},
	{Name: "x500UniqueIdentifier", Equality: EqualityExact},
}
