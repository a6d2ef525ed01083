package runners_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

func TestDecodePages(t *testing.T) {
	t.Parallel()
	gs, total, err := runners.DecodeGroupsPage([]byte(`{"total_count":2,"runner_groups":[{"id":1,"name":"Default","visibility":"all"},{"id":7,"name":"unity"}]}`))
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	assert.Equal(t, []runners.Group{{ID: 1, Name: "Default"}, {ID: 7, Name: "unity"}}, gs)

	rs, total, ignored, err := runners.DecodeRunnersPage([]byte(`{"total_count":1,"runners":[{"id":9,"name":"win-9","os":"Windows","status":"offline","busy":true,
		"labels":[{"id":1,"name":"self-hosted","type":"read-only"},{"name":5},{"name":null},{"name":{}},{"name":"unity"}]}]}`), 7)
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, 2, ignored, "5 and {} are not strings; null is no name at all")
	assert.Equal(t, []runners.Runner{{ID: 9, Name: "win-9", Status: "offline", Busy: true, Labels: []string{"self-hosted", "unity"}, GroupID: 7}}, rs)

	for body, want := range map[string]error{
		`<html>`:                           runners.ErrNotJSON,
		`{"total_count":1,"runners":[`:     runners.ErrNotJSON,
		`{"runners":[]}`:                   runners.ErrNoTotal,
		`{"total_count":1,"runners":[{}]}`: runners.ErrInvalidID,
		`{"total_count":1,"runners":[{"id":9007199254740992}]}`: runners.ErrInvalidID,
		`{"total_count":1,"runners":[{"id":"9"}]}`:              runners.ErrNotJSON,
		`{"total_count":1,"runners":[null]}`:                    runners.ErrInvalidID,
	} {
		_, _, _, err := runners.DecodeRunnersPage([]byte(body), 1)
		assert.True(t, errors.Is(err, want), "%s: %v", body, err)
	}
}

func FuzzDecodePages(f *testing.F) {
	f.Add([]byte(`{"total_count":1,"runners":[{"id":9,"name":"w","labels":[{"name":"x"},{"name":1}]}]}`))
	f.Add([]byte(`{"total_count":2,"runner_groups":[{"id":1,"name":"a"}]}`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rs, total, ignored, err := runners.DecodeRunnersPage(body, 3)
		if err == nil {
			if ignored < 0 || total < -1<<62 {
				t.Fatal("impossible counts")
			}
			for _, r := range rs {
				if !runners.ValidID(r.ID) || r.GroupID != 3 {
					t.Fatalf("runner %+v accepted", r)
				}
			}
		}
		gs, _, err := runners.DecodeGroupsPage(body)
		if err == nil {
			for _, g := range gs {
				if !runners.ValidID(g.ID) {
					t.Fatalf("group %+v accepted", g)
				}
			}
		}
	})
}
