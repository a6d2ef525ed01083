package policy

import (
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

// ---- rule 11: exceptions ----

func (a *analysis) activeException(p string) (registry.Exception, bool) {
	for _, e := range a.pol.Exceptions {
		if e.Path == p && !e.Expired(a.pol.Now) {
			return e, true
		}
	}
	return registry.Exception{}, false
}

func (a *analysis) expiredException(p string) bool {
	for _, e := range a.pol.Exceptions {
		if e.Path == p && e.Expired(a.pol.Now) {
			return true
		}
	}
	return false
}

func (a *analysis) exceptionRules() {
	for _, e := range a.pol.Exceptions {
		w, ok := a.wfByPath[e.Path]
		if e.Expired(a.pol.Now) {
			a.add(ExpiredPolicyException, e.Path, "", 0)
			continue
		}
		useful := false
		if ok && !w.broken {
			for _, j := range w.jobs {
				if j.marker && !j.paid && !j.fallback {
					useful = true
				}
			}
		}
		if !useful {
			a.add(StalePolicyException, e.Path, "", 0)
		}
	}
}
