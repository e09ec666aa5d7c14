package horizontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cpactl/cpactl/horizon"
)

// A test Horizon can also answer from any pull directory (one `cpactl
// horizon pull` wrote, or `cpactl generate --format horizon`): each pod's
// server answers every GET the pull makes from the files the pull holds
// for that pod or for the federation, pages included, so that pulling it
// again gives the same files. Pages of the directory's page size are sent
// from their files unchanged (the CPA maximum's 250,000 sessions are never
// decoded); other page sizes are cut from the records.

// pullSource is the pull directory a federation answers from.
type pullSource struct {
	dir string
	m   *horizon.Manifest
	// files: request path -> pod id ("" for federation-wide) -> its
	// files in page order.
	files map[string]map[string][]horizon.File
	// main is the pod whose server answered the federation-wide reads
	// (the one without a pods file of its own).
	main string
}

// NewPull starts one TLS server per pod of the pull directory dir; tmp is
// where the CA file goes. Close stops them.
func NewPull(dir, tmp string) (*Federation, error) {
	m, err := horizon.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	src := &pullSource{dir: dir, m: m, files: map[string]map[string][]horizon.File{}}
	ownPods := map[string]bool{}
	for _, fl := range m.Files {
		pod := fl.Pod
		switch fl.Endpoint {
		case "pod-endpoints": // federation-wide, by the id in its path
			pod = ""
		case "pods":
			ownPods[fl.Pod] = true
		}
		if src.files[fl.Path] == nil {
			src.files[fl.Path] = map[string][]horizon.File{}
		}
		src.files[fl.Path][pod] = append(src.files[fl.Path][pod], fl)
	}
	f := &Federation{dir: dir, pull: src, servers: map[string]*httptest.Server{}, tokens: map[string]*token{}}
	for _, p := range m.Pods {
		f.pods = append(f.pods, podFixture{ID: p.ID, Name: p.Name})
		if src.main == "" && !ownPods[p.ID] {
			src.main = p.Name
		}
	}
	if len(f.pods) == 0 {
		return nil, fmt.Errorf("%s: the pull has no pod", dir)
	}
	if err := f.start(tmp); err != nil {
		return nil, err
	}
	return f, nil
}

// StartPull starts the federation of a pull directory and stops it when
// the test ends.
func StartPull(t interface {
	Helper()
	Fatal(args ...any)
	TempDir() string
	Cleanup(func())
}, dir string) *Federation {
	t.Helper()
	f, err := NewPull(dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// MainPod is the pod whose server a pull should be given (--url): for a
// pull directory, the pod whose server answered the federation-wide reads;
// for the fixtures, the first pod.
func (f *Federation) MainPod() string {
	if f.pull != nil {
		return f.pull.main
	}
	return f.pods[0].Name
}

// getPull answers a GET from the pull directory.
func (f *Federation) getPull(w http.ResponseWriter, r *http.Request, me podFixture, rest string, faults Faults) {
	src := f.pull
	byPod, ok := src.files[rest]
	route, _, known := match(rest)
	if !ok || !known {
		apiError(w, http.StatusNotFound, "common.not.found", "Resource not found")
		return
	}
	q := r.URL.Query()
	key := me.ID
	if rest == "/inventory/v3/global-sessions" {
		set := 0
		for _, k := range []string{"user_id", "pod_id", "brokering_pod_id"} {
			if len(q[k]) > 0 {
				set++
			}
		}
		if set != 1 {
			apiError(w, http.StatusBadRequest, "common.request.invalid", "Exactly one of user_id, pod_id and brokering_pod_id must be set")
			return
		}
		if len(q["pod_id"]) == 0 {
			apiError(w, http.StatusBadRequest, "test.unsupported", "the test server answers global sessions by pod_id only")
			return
		}
		key = q["pod_id"][0]
	}
	files, ok := byPod[key]
	if !ok {
		files, ok = byPod[""]
	}
	if !ok {
		if rest == "/inventory/v3/global-sessions" {
			files = nil // a pod without sessions in the pull
		} else {
			apiError(w, http.StatusNotFound, "common.not.found", "Resource not found")
			return
		}
	}
	if rest == "/monitor/v3/desktop-pools/metrics" {
		ids := q["ids"]
		if len(ids) == 0 {
			apiError(w, http.StatusBadRequest, "common.request.invalid", "ids is required")
			return
		}
		src.serveRecords(w, files, 0, -1, func(raw json.RawMessage) bool {
			var it struct {
				ID string `json:"id"`
			}
			return json.Unmarshal(raw, &it) == nil && slices.Contains(ids, it.ID)
		})
		return
	}
	if !route.Array || !route.Paged {
		if len(files) == 1 {
			src.serveFile(w, files[0])
			return
		}
		src.serveRecords(w, files, 0, -1, nil)
		return
	}
	page, size, paged, bad := pageParams(q)
	if bad != "" {
		apiError(w, http.StatusBadRequest, "common.request.invalid", bad)
		return
	}
	total := 0
	for _, fl := range files {
		total += fl.Records
	}
	w.Header().Set("X-TOTAL-COUNT", strconv.Itoa(total))
	if !paged {
		src.serveRecords(w, files, 0, -1, nil)
		return
	}
	start := (page - 1) * size
	if start >= total && page > 1 {
		apiError(w, http.StatusBadRequest, "common.pagination.invalid", "Invalid page number")
		return
	}
	if start+size < total || faults.LyingLastPage {
		w.Header().Set("HAS_MORE_RECORDS", "true")
	}
	// Pages of the pull's own size are its files, sent unchanged.
	if size == src.m.PageSize && page <= len(files) && pagesOf(files, size) {
		src.serveFile(w, files[page-1])
		return
	}
	if len(files) == 0 {
		writeJSON(w, []any{})
		return
	}
	src.serveRecords(w, files, start, size, nil)
}

// pagesOf reports whether files are pages of size: each full but the last.
func pagesOf(files []horizon.File, size int) bool {
	for i, fl := range files {
		if fl.Records > size || (i < len(files)-1 && fl.Records != size) {
			return false
		}
	}
	return true
}

// serveFile sends a file of the pull unchanged.
func (src *pullSource) serveFile(w http.ResponseWriter, fl horizon.File) {
	fh, err := os.Open(filepath.Join(src.dir, filepath.FromSlash(fl.Name)))
	if err != nil {
		apiError(w, http.StatusInternalServerError, "test.pull", err.Error())
		return
	}
	defer fh.Close()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.Copy(w, fh)
}

// serveRecords sends, as one JSON array, the records of files from
// number start on, at most n of them (n < 0: all), that keep accepts (nil:
// all).
func (src *pullSource) serveRecords(w http.ResponseWriter, files []horizon.File, start, n int, keep func(json.RawMessage) bool) {
	var body bytes.Buffer
	body.WriteByte('[')
	i, sent := 0, 0
	for _, fl := range files {
		if n >= 0 && sent >= n {
			break
		}
		err := horizon.EachRecord(src.dir, fl, func(raw json.RawMessage) error {
			defer func() { i++ }()
			if i < start || (n >= 0 && sent >= n) || (keep != nil && !keep(raw)) {
				return nil
			}
			if sent > 0 {
				body.WriteByte(',')
			}
			body.Write(raw)
			sent++
			return nil
		})
		if err != nil {
			apiError(w, http.StatusInternalServerError, "test.pull", err.Error())
			return
		}
	}
	body.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body.Bytes())
}

// PodURLFlags are the --pod-url flags that reach every pod but the main
// one through its test server.
func (f *Federation) PodURLFlags() []string {
	var out []string
	for _, p := range f.pods {
		if p.Name != f.MainPod() {
			out = append(out, "--pod-url="+p.Name+"="+f.URL(p.Name))
		}
	}
	return out
}
