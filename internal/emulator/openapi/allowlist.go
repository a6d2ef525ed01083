package openapi

import "net/http"

// AllowedStatus is a status GitHub sends on an operation without
// documenting it there, with where that is known from.
type AllowedStatus struct {
	// Operation is "METHOD /template", or "*" for every operation.
	Operation string
	Status    int
	// Source is the public evidence that GitHub answers so.
	Source string
}

// Allowlist is the one reviewed list of undocumented statuses. Every entry
// names its source; a status outside it (and outside the description) fails
// the check.
var Allowlist = []AllowedStatus{
	{"*", http.StatusMovedPermanently, "https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects (renamed repository; @octokit/fixtures scenario rename-repository, GET → 301)"},
	{"*", http.StatusTemporaryRedirect, "https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects (@octokit/fixtures scenario rename-repository, PATCH → 307)"},
	{"*", http.StatusNotModified, "https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate (any GET with If-None-Match)"},
	{"*", http.StatusUnauthorized, "https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api (401 Bad credentials on any route)"},
	{"*", http.StatusForbidden, "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-primary-rate-limit (403 on any route when a rate limit is exceeded, or a missing permission)"},
	{"*", http.StatusTooManyRequests, "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-secondary-rate-limit (403 or 429)"},
	{"*", http.StatusBadRequest, "https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api (400 Problems parsing JSON; the HTML 'Whoa there!' page)"},
	{"*", http.StatusNotFound, "https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api#404-not-found-for-an-existing-resource (private resources answer 404)"},
	{"*", http.StatusRequestTimeout, "https://www.githubstatus.com incident reports; the reference client retries 408 (spec §3.6)"},
	{"*", http.StatusInternalServerError, "any route: server errors (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api)"},
	{"*", http.StatusBadGateway, "any route: server errors (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api)"},
	{"*", http.StatusServiceUnavailable, "any route: server errors (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api)"},
	{"*", http.StatusGatewayTimeout, "any route: server errors (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api#timeouts)"},
	{"PUT /repos/{owner}/{repo}/contents/{path}", http.StatusNotFound, "404 'Branch <b> not found' for a missing branch (https://github.com/pome-sh/digital-twins/pull/400)"},
	{"DELETE /repos/{owner}/{repo}/contents/{path}", http.StatusConflict, "409 '<path> does not match <sha>' and 'is at X but expected Y' (https://github.com/PyGithub/PyGithub/issues/1787)"},
	{"POST /repos/{owner}/{repo}/git/refs", http.StatusConflict, "409 when the repository is empty (https://docs.github.com/en/rest/guides/using-the-rest-api-to-interact-with-your-git-database)"},
	{"GET /repos/{owner}/{repo}/git/ref/{ref}", http.StatusConflict, "409 'Git Repository is empty.' (https://docs.github.com/en/rest/guides/using-the-rest-api-to-interact-with-your-git-database)"},
	{"GET /repos/{owner}/{repo}/contents/{path}", http.StatusForbidden, "403 too_large for a blob over 100 MB (https://docs.github.com/en/rest/repos/contents#get-repository-content)"},
}

// Allowed returns the allowlist entry covering status on op.
func Allowed(op string, status int) (AllowedStatus, bool) {
	for _, a := range Allowlist {
		if a.Status == status && (a.Operation == "*" || a.Operation == op) {
			return a, true
		}
	}
	return AllowedStatus{}, false
}
