package ldapschema

// Standard attribute and object class names cpactl reuses from core, cosine
// and inetorgperson.
const (
	AttrCN          = "cn"
	AttrOU          = "ou"
	AttrDC          = "dc"
	AttrUID         = "uid"
	AttrSN          = "sn"
	AttrDescription = "description"
	AttrMember      = "member"
	AttrObjectClass = "objectClass"

	ClassTop                = "top"
	ClassOrganizationalUnit = "organizationalUnit"
	ClassInetOrgPerson      = "inetOrgPerson"
	ClassDevice             = "device"
	ClassDCObject           = "dcObject"
	ClassOrganization       = "organization"
)

// The five global settings, named exactly as Horizon names them (docs/schema.md).
const (
	AttrLoadThresholdForSite          = "pae-LoadThresholdForSite"
	AttrRDSLoadIndexThreshold         = "pae-RDSLoadIndexThreshold"
	AttrRDSConnectingSessionThreshold = "pae-RDSConnectingSessionThreshold"
	AttrMinRDSServersInLBQueue        = "pae-MinRDSServersInLBQueue"
	AttrEnableSiteRedirection         = "pae-EnableSiteRedirection"
)

// cpactl's own attribute names.
const (
	AttrPreferredSite                  = "pae-PreferredSite"
	AttrSiteURL                        = "pae-SiteURL"
	AttrSiteDN                         = "pae-SiteDN"
	AttrPodStatus                      = "pae-PodStatus"
	AttrTag                            = "pae-Tag"
	AttrPoolKind                       = "pae-PoolKind"
	AttrDedicated                      = "pae-Dedicated"
	AttrCapacity                       = "pae-Capacity"
	AttrSessions                       = "pae-Sessions"
	AttrAssigned                       = "pae-Assigned"
	AttrFarmDN                         = "pae-FarmDN"
	AttrEnabled                        = "pae-Enabled"
	AttrMaxSessionsPerHost             = "pae-MaxSessionsPerHost"
	AttrHostLoadIndexThreshold         = "pae-HostLoadIndexThreshold"
	AttrHostConnectingSessionThreshold = "pae-HostConnectingSessionThreshold"
	AttrLoadIndex                      = "pae-LoadIndex"
	AttrConnectingSessions             = "pae-ConnectingSessions"
	AttrHostFeature                    = "pae-HostFeature"
	AttrEntitlementType                = "pae-EntitlementType"
	AttrScope                          = "pae-Scope"
	AttrUseHomeSite                    = "pae-UseHomeSite"
	AttrRequireHomeSite                = "pae-RequireHomeSite"
	AttrUsePreferredSites              = "pae-UsePreferredSites"
	AttrIgnoreHighLoadPreferredSites   = "pae-IgnoreHighLoadPreferredSites"
	AttrLoadDistribution               = "pae-LoadDistribution"
	AttrMultipleSessionAutoClean       = "pae-MultipleSessionAutoClean"
	AttrMultipleSessionsPerUser        = "pae-MultipleSessionsPerUser"
	AttrClientRestrictions             = "pae-ClientRestrictions"
	AttrDefaultProtocol                = "pae-DefaultProtocol"
	AttrEntitlementPoolDN              = "pae-EntitlementPoolDN"
	AttrUserDN                         = "pae-UserDN"
	AttrGroupDN                        = "pae-GroupDN"
	AttrEntitlementDN                  = "pae-EntitlementDN"
	AttrPodDN                          = "pae-PodDN"
	AttrBrokeringPodDN                 = "pae-BrokeringPodDN"
	AttrPoolDN                         = "pae-PoolDN"
	AttrHostDN                         = "pae-HostDN"
	AttrClientDN                       = "pae-ClientDN"
	AttrSessionState                   = "pae-SessionState"
	AttrMachine                        = "pae-Machine"
	AttrDomain                         = "pae-Domain"
	AttrBackupEntitlementDN            = "pae-BackupEntitlementDN"
)

// The per-host policy (ADMX) thresholds of an RDS host (docs/storm.md).
const (
	AttrPolicyLoadIndexThreshold         = "pae-PolicyLoadIndexThreshold"
	AttrPolicyConnectingSessionThreshold = "pae-PolicyConnectingSessionThreshold"
)

// cpactl's object class names.
const (
	ClassGlobalSettings    = "pae-GlobalSettings"
	ClassSite              = "pae-Site"
	ClassPod               = "pae-Pod"
	ClassConnectionServer  = "pae-ConnectionServer"
	ClassDesktopPool       = "pae-DesktopPool"
	ClassFarmPool          = "pae-FarmPool"
	ClassRDSFarm           = "pae-RDSFarm"
	ClassRDSHost           = "pae-RDSHost"
	ClassGlobalEntitlement = "pae-GlobalEntitlement"
	ClassHomeSite          = "pae-HomeSite"
	ClassSession           = "pae-Session"
	ClassPodAssignment     = "pae-PodAssignment"
	ClassGroup             = "pae-Group"
	ClassUserIdentity      = "pae-UserIdentity"
)

// Attributes is every attribute type cpactl owns, in OID order. Append only.
var Attributes = []AttributeType{
	{Number: 1, Name: AttrLoadThresholdForSite, Syntax: Integer, Single: true, Values: "0..100, default 98",
		Desc: "Horizon: percent load above which a preferred site is skipped when its GE ignores preferred sites with high load"},
	{Number: 2, Name: AttrRDSLoadIndexThreshold, Syntax: Integer, Single: true, Values: "0..100, default 20",
		Desc: "Horizon: load index under which an RDS host may join buckets 1 and 2"},
	{Number: 3, Name: AttrRDSConnectingSessionThreshold, Syntax: Integer, Single: true, Values: "0..150, default 20",
		Desc: "Horizon: connecting sessions under which an RDS host may join buckets 1 and 2"},
	{Number: 4, Name: AttrMinRDSServersInLBQueue, Syntax: Integer, Single: true, Values: "0..1000, default 4",
		Desc: "Horizon: minimum RDS hosts in bucket 1; the load index threshold is raised to reach it"},
	{Number: 5, Name: AttrEnableSiteRedirection, Syntax: Integer, Single: true, Values: "0 or 1, default 0",
		Desc: "Horizon: 1 redirects a user who connects to another site to the home site"},
	{Number: 6, Name: AttrPreferredSite, Syntax: DirectoryString, Values: "{rank}site name, ranks 0..n-1",
		Desc: "a ranked preferred site of a site"},
	{Number: 7, Name: AttrSiteURL, Syntax: DirectoryString, Single: true, Values: "URL",
		Desc: "the address users of a site connect to"},
	{Number: 8, Name: AttrSiteDN, Syntax: DN, Single: true, Values: "DN of a site",
		Desc: "the site of a pod, or of a home-site row"},
	{Number: 9, Name: AttrPodStatus, Syntax: DirectoryString, Single: true, Values: "ONLINE or OFFLINE, default ONLINE",
		Desc: "whether a pod takes sessions"},
	{Number: 10, Name: AttrTag, Syntax: DirectoryString, Values: "tag",
		Desc: "a Connection Server restriction tag"},
	{Number: 11, Name: AttrPoolKind, Syntax: DirectoryString, Single: true, Values: "DESKTOP, RDS_DESKTOP or APPLICATION",
		Desc: "what a pool is made of"},
	{Number: 12, Name: AttrDedicated, Syntax: Boolean, Single: true, Values: "TRUE or FALSE",
		Desc: "dedicated (TRUE) or floating (FALSE) desktops"},
	{Number: 13, Name: AttrCapacity, Syntax: Integer, Single: true, Values: ">= 0, default 0",
		Desc: "machines in a desktop pool"},
	{Number: 14, Name: AttrSessions, Syntax: Integer, Single: true, Values: ">= 0, default 0",
		Desc: "sessions in use on a desktop pool or an RDS host"},
	{Number: 15, Name: AttrAssigned, Syntax: Integer, Single: true, Values: ">= 0, default 0",
		Desc: "machines already assigned in a dedicated desktop pool"},
	{Number: 16, Name: AttrFarmDN, Syntax: DN, Single: true, Values: "DN of a farm",
		Desc: "the RDS farm serving a farm-backed pool"},
	{Number: 17, Name: AttrEnabled, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default TRUE",
		Desc: "whether a pool, RDS host or global entitlement is enabled"},
	{Number: 18, Name: AttrMaxSessionsPerHost, Syntax: Integer, Single: true, Values: ">= 0, 0 = unlimited (default)",
		Desc: "session limit of each host of an RDS farm"},
	{Number: 19, Name: AttrHostLoadIndexThreshold, Syntax: Integer, Single: true, Values: "0..100, 0 = off (default)",
		Desc: "load index at which a host of the farm refuses logons"},
	{Number: 20, Name: AttrHostConnectingSessionThreshold, Syntax: Integer, Single: true, Values: "0..150, 0 = off (default)",
		Desc: "connecting sessions at which a host of the farm refuses logons"},
	{Number: 21, Name: AttrLoadIndex, Syntax: Integer, Single: true, Values: "-1..100, -1 = load balancing off, default 0",
		Desc: "the load index an RDS host last reported"},
	{Number: 22, Name: AttrConnectingSessions, Syntax: Integer, Single: true, Values: ">= 0, default 0",
		Desc: "sessions connecting to an RDS host"},
	{Number: 23, Name: AttrHostFeature, Syntax: DirectoryString, Values: "MULTISESSION, UNAUTHENTICATED, RDP, PCOIP, BLAST",
		Desc: "a feature an RDS host supports"},
	{Number: 24, Name: AttrEntitlementType, Syntax: DirectoryString, Single: true, Values: "DESKTOP or APPLICATION",
		Desc: "what a global entitlement publishes"},
	{Number: 25, Name: AttrScope, Syntax: DirectoryString, Single: true, Values: "ANY, SITE or LOCAL, default ANY",
		Desc: "the scope policy of a global entitlement"},
	{Number: 26, Name: AttrUseHomeSite, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "start the search at the user's home site"},
	{Number: 27, Name: AttrRequireHomeSite, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "only users with a home site get the entitlement"},
	{Number: 28, Name: AttrUsePreferredSites, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "search the connecting site's preferred sites"},
	{Number: 29, Name: AttrIgnoreHighLoadPreferredSites, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "skip preferred sites loaded above pae-LoadThresholdForSite"},
	{Number: 30, Name: AttrLoadDistribution, Syntax: DirectoryString, Single: true, Values: "NONE, LOAD or SESSION, default NONE",
		Desc: "the Session Load Distribution policy"},
	{Number: 31, Name: AttrMultipleSessionAutoClean, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "log off the redundant sessions the user does not pick"},
	{Number: 32, Name: AttrMultipleSessionsPerUser, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "one session per client device"},
	{Number: 33, Name: AttrClientRestrictions, Syntax: Boolean, Single: true, Values: "TRUE or FALSE, default FALSE",
		Desc: "only client computers in an entitled group may connect"},
	{Number: 34, Name: AttrDefaultProtocol, Syntax: DirectoryString, Single: true, Values: "BLAST, PCOIP or RDP, default BLAST",
		Desc: "the display protocol used when the request names none"},
	{Number: 35, Name: AttrEntitlementPoolDN, Syntax: DN, Values: "DN of a pool",
		Desc: "a pool associated with a global entitlement"},
	{Number: 36, Name: AttrUserDN, Syntax: DN, Single: true, Values: "DN of a user",
		Desc: "the user of a home-site row, session or pod assignment"},
	{Number: 37, Name: AttrGroupDN, Syntax: DN, Single: true, Values: "DN of a group",
		Desc: "the group of a home-site row"},
	{Number: 38, Name: AttrEntitlementDN, Syntax: DN, Single: true, Values: "DN of a global entitlement",
		Desc: "the global entitlement of a home-site override, session or pod assignment"},
	{Number: 39, Name: AttrPodDN, Syntax: DN, Single: true, Values: "DN of a pod",
		Desc: "the hosting pod of a session, or the pod of a pod assignment"},
	{Number: 40, Name: AttrBrokeringPodDN, Syntax: DN, Single: true, Values: "DN of a pod",
		Desc: "the pod that brokered a session"},
	{Number: 41, Name: AttrPoolDN, Syntax: DN, Single: true, Values: "DN of a pool",
		Desc: "the pool of a session"},
	{Number: 42, Name: AttrHostDN, Syntax: DN, Single: true, Values: "DN of an RDS host",
		Desc: "the RDS host of a session"},
	{Number: 43, Name: AttrClientDN, Syntax: DN, Single: true, Values: "DN of a client computer",
		Desc: "the client computer of a session"},
	{Number: 44, Name: AttrSessionState, Syntax: DirectoryString, Single: true, Values: "CONNECTED or DISCONNECTED",
		Desc: "the state of a session"},
	{Number: 45, Name: AttrMachine, Syntax: DirectoryString, Single: true, Values: "machine name",
		Desc: "the machine of a dedicated pod assignment"},
	{Number: 46, Name: AttrDomain, Syntax: DirectoryString, Single: true, Values: "NetBIOS or DNS domain name",
		Desc: "the domain of a user"},
	{Number: 47, Name: AttrBackupEntitlementDN, Syntax: DN, Single: true, Values: "DN of a floating desktop global entitlement",
		Desc: "the backup global entitlement of a floating desktop global entitlement"},
	{Number: 48, Name: AttrPolicyLoadIndexThreshold, Syntax: Integer, Single: true, Values: "0..100, 0 = off",
		Desc: "an RDS host's policy (ADMX) Load Index Threshold; replaces the farm's"},
	{Number: 49, Name: AttrPolicyConnectingSessionThreshold, Syntax: Integer, Single: true, Values: "0..150, 0 = off",
		Desc: "an RDS host's policy (ADMX) Connecting Session Threshold; replaces the farm's"},
}

// Classes is every object class cpactl owns, in OID order. Append only.
var Classes = []ObjectClass{
	{Number: 1, Name: ClassGlobalSettings, Kind: Structural, Desc: "federation-wide settings (cn=Common)",
		Must: []string{AttrCN},
		May: []string{AttrLoadThresholdForSite, AttrRDSLoadIndexThreshold, AttrRDSConnectingSessionThreshold,
			AttrMinRDSServersInLBQueue, AttrEnableSiteRedirection, AttrDescription}},
	{Number: 2, Name: ClassSite, Kind: Structural, Desc: "a Cloud Pod Architecture site",
		Must: []string{AttrCN},
		May:  []string{AttrDescription, AttrSiteURL, AttrPreferredSite}},
	{Number: 3, Name: ClassPod, Kind: Structural, Desc: "a Horizon pod",
		Must: []string{AttrCN, AttrSiteDN},
		May: []string{AttrDescription, AttrPodStatus, AttrRDSLoadIndexThreshold, AttrRDSConnectingSessionThreshold,
			AttrMinRDSServersInLBQueue}},
	{Number: 4, Name: ClassConnectionServer, Kind: Structural, Desc: "a Connection Server (child of its pod)",
		Must: []string{AttrCN},
		May:  []string{AttrDescription, AttrTag}},
	{Number: 5, Name: ClassDesktopPool, Kind: Structural, Desc: "a desktop pool (child of its pod)",
		Must: []string{AttrCN, AttrDedicated},
		May:  []string{AttrDescription, AttrCapacity, AttrSessions, AttrAssigned, AttrEnabled}},
	{Number: 6, Name: ClassFarmPool, Kind: Structural, Desc: "an RDS desktop or application pool (child of its pod)",
		Must: []string{AttrCN, AttrPoolKind, AttrFarmDN},
		May:  []string{AttrDescription, AttrEnabled}},
	{Number: 7, Name: ClassRDSFarm, Kind: Structural, Desc: "an RDS farm (child of its pod)",
		Must: []string{AttrCN},
		May: []string{AttrDescription, AttrMaxSessionsPerHost, AttrHostLoadIndexThreshold,
			AttrHostConnectingSessionThreshold}},
	{Number: 8, Name: ClassRDSHost, Kind: Structural, Desc: "an RDS host (child of its farm)",
		Must: []string{AttrCN},
		May: []string{AttrDescription, AttrLoadIndex, AttrSessions, AttrConnectingSessions, AttrHostFeature,
			AttrEnabled, AttrPolicyLoadIndexThreshold, AttrPolicyConnectingSessionThreshold}},
	{Number: 9, Name: ClassGlobalEntitlement, Kind: Structural, Desc: "a global entitlement",
		Must: []string{AttrCN, AttrEntitlementType},
		May: []string{AttrDescription, AttrScope, AttrDedicated, AttrUseHomeSite, AttrRequireHomeSite,
			AttrUsePreferredSites, AttrIgnoreHighLoadPreferredSites, AttrLoadDistribution,
			AttrMultipleSessionAutoClean, AttrMultipleSessionsPerUser, AttrTag, AttrClientRestrictions,
			AttrEnabled, AttrDefaultProtocol, AttrMember, AttrEntitlementPoolDN, AttrBackupEntitlementDN}},
	{Number: 10, Name: ClassHomeSite, Kind: Structural, Desc: "a home-site row: a user or group, a site, optionally one GE",
		Must: []string{AttrCN, AttrSiteDN},
		May:  []string{AttrUserDN, AttrGroupDN, AttrEntitlementDN}},
	{Number: 11, Name: ClassSession, Kind: Structural, Desc: "an existing session in the global data layer",
		Must: []string{AttrCN, AttrUserDN, AttrEntitlementDN, AttrPodDN},
		May:  []string{AttrBrokeringPodDN, AttrPoolDN, AttrHostDN, AttrClientDN, AttrSessionState}},
	{Number: 12, Name: ClassPodAssignment, Kind: Structural, Desc: "a dedicated user's pod assignment for one GE",
		Must: []string{AttrCN, AttrUserDN, AttrEntitlementDN, AttrPodDN},
		May:  []string{AttrMachine}},
	{Number: 13, Name: ClassGroup, Kind: Structural, Desc: "a group of users, computers and groups; may be empty",
		Must: []string{AttrCN},
		May:  []string{AttrMember, AttrDescription}},
	{Number: 14, Name: ClassUserIdentity, Kind: Auxiliary, Desc: "cpactl's additions to inetOrgPerson users",
		May: []string{AttrDomain}},
}
