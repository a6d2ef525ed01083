package editor

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// Profile is a provisioning profile.
type Profile string

// Provisioning profiles (reference-behavior §1.14).
const (
	ProfileEditorOnly              Profile = "EditorOnly"
	ProfileStandaloneWindowsIl2Cpp Profile = "StandaloneWindowsIl2Cpp"
	ProfileAndroid                 Profile = "Android"
	ProfileFull                    Profile = "Full"
	// DefaultProfile is the provisioning-profile default.
	DefaultProfile = ProfileFull
)

// Profiles lists every profile.
var Profiles = []Profile{ProfileEditorOnly, ProfileStandaloneWindowsIl2Cpp, ProfileAndroid, ProfileFull}

// ParseProfile validates a provisioning-profile value (exact spelling).
func ParseProfile(s string) (Profile, bool) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, true
		}
	}
	return "", false
}

// PlaybackEngines is where, below the editor's directory, module groups are
// proven.
const PlaybackEngines = "Data/PlaybackEngines"

// Group is one module group and its on-disk proof (facts §4).
type Group struct {
	Name string
	// Proof returns the slash-separated path (relative to
	// Data/PlaybackEngines) of what proves the group, or "" and what is
	// missing.
	Proof func(fsys fs.FS) (proof, missing string)
}

// Groups are the module groups of facts §4 in table order.
var Groups = []Group{
	{"windows-il2cpp", func(f fs.FS) (string, string) {
		var dirs []string
		for _, v := range []string{"development", "nondevelopment"} {
			dirs = append(dirs, "windowsstandalonesupport/Variations/win64_player_"+v+"_il2cpp")
		}
		if p := anyFileIn(f, dirs, func(n string) bool {
			l := strings.ToLower(n)
			return strings.HasSuffix(l, ".dll") || strings.HasSuffix(l, ".exe")
		}); p != "" {
			return p, ""
		}
		return "", "a .dll or .exe (WindowsPlayer.exe, UnityPlayer.dll, GameAssembly.dll) in windowsstandalonesupport/Variations/win64_player_{development,nondevelopment}_il2cpp/"
	}},
	{"webgl", func(f fs.FS) (string, string) {
		ext := anyFile(f, "WebGLSupport/UnityEditor.WebGL.Extensions.dll")
		if ext == "" {
			return "", "WebGLSupport/UnityEditor.WebGL.Extensions.dll"
		}
		var tools []string
		for _, dir := range []string{"emscripten/", ""} {
			for _, name := range []string{"emscripten-version.txt", "emcc.py"} {
				tools = append(tools, "WebGLSupport/BuildTools/Emscripten/"+dir+name)
			}
		}
		if p := anyFile(f, tools...); p != "" {
			return ext + " and " + p, ""
		}
		return "", "WebGLSupport/BuildTools/Emscripten/{emscripten/,}{emscripten-version.txt,emcc.py}"
	}},
	{"linux-mono", linuxPlayer("mono")},
	{"linux-il2cpp", linuxPlayer("il2cpp")},
	{"android", func(f fs.FS) (string, string) {
		if p := anyFile(f, "AndroidPlayer/UnityEditor.Android.Extensions.dll", "AndroidPlayer/Tools/Source.properties"); p != "" {
			return p, ""
		}
		return "", "AndroidPlayer/UnityEditor.Android.Extensions.dll or AndroidPlayer/Tools/Source.properties"
	}},
	{"android-sdk-ndk-tools", func(f fs.FS) (string, string) {
		adb := anyFile(f, "AndroidPlayer/SDK/platform-tools/adb", "AndroidPlayer/SDK/platform-tools/adb.exe")
		if adb == "" {
			return "", "AndroidPlayer/SDK/platform-tools/adb(.exe)"
		}
		ndk := anyFile(f, "AndroidPlayer/NDK/source.properties")
		if ndk == "" {
			return "", "AndroidPlayer/NDK/source.properties"
		}
		clang := findUnder(f, "AndroidPlayer/NDK/toolchains/llvm/prebuilt", func(n string) bool {
			l := strings.ToLower(n)
			return l == "clang++" || l == "clang++.exe"
		}, maxSearchEntries)
		if clang == "" {
			return "", "clang++(.exe) under AndroidPlayer/NDK/toolchains/llvm/prebuilt/"
		}
		return adb + " and " + ndk + " and " + clang, ""
	}},
	{"android-open-jdk", func(f fs.FS) (string, string) {
		if p := anyFile(f, "AndroidPlayer/OpenJDK/bin/java", "AndroidPlayer/OpenJDK/bin/java.exe"); p != "" {
			return p, ""
		}
		return "", "AndroidPlayer/OpenJDK/bin/java(.exe)"
	}},
}

func linuxPlayer(backend string) func(fs.FS) (string, string) {
	return func(f fs.FS) (string, string) {
		var files []string
		for _, v := range []string{"development", "nondevelopment"} {
			for _, name := range []string{"LinuxPlayer", "UnityPlayer.so"} {
				files = append(files, "LinuxStandaloneSupport/Variations/linux64_player_"+v+"_"+backend+"/"+name)
			}
		}
		if p := anyFile(f, files...); p != "" {
			return p, ""
		}
		return "", "LinuxStandaloneSupport/Variations/linux64_player_{development,nondevelopment}_" + backend + "/{LinuxPlayer,UnityPlayer.so}"
	}
}

// GroupsOf returns the module groups profile must prove; EditorOnly needs
// none.
func GroupsOf(p Profile) []Group {
	want := map[Profile][]string{
		ProfileEditorOnly:              nil,
		ProfileStandaloneWindowsIl2Cpp: {"windows-il2cpp"},
		ProfileAndroid:                 {"android", "android-sdk-ndk-tools", "android-open-jdk"},
	}
	if p == ProfileFull {
		return Groups
	}
	var out []Group
	for _, g := range Groups {
		for _, n := range want[p] {
			if g.Name == n {
				out = append(out, g)
			}
		}
	}
	return out
}

// GroupProof is one proven group in the diagnostics record.
type GroupProof struct {
	Name  string `json:"name"`
	Proof string `json:"proof"`
}

// MissingGroupError names the first group a profile could not prove.
type MissingGroupError struct {
	Profile Profile
	Group   string
	Missing string
}

// ReasonCode is the refusal code of a missing module group.
func (e *MissingGroupError) ReasonCode() string { return "module-group-missing" }

// Error implements error.
func (e *MissingGroupError) Error() string {
	return "provisioning profile " + string(e.Profile) + " needs module group " + e.Group + ": missing " + e.Missing + " under " + PlaybackEngines
}

// ProveGroups proves every group of profile on playbackEngines (an fs.FS
// rooted at <editor dir>/Data/PlaybackEngines) and returns the proofs, or
// a *MissingGroupError for the first group without one.
func ProveGroups(playbackEngines fs.FS, p Profile) ([]GroupProof, error) {
	out := []GroupProof{}
	for _, g := range GroupsOf(p) {
		proof, missing := g.Proof(playbackEngines)
		if proof == "" {
			return nil, &MissingGroupError{Profile: p, Group: g.Name, Missing: missing}
		}
		out = append(out, GroupProof{Name: g.Name, Proof: proof})
	}
	return out, nil
}

// maxSearchEntries bounds the recursive search for clang++.
const maxSearchEntries = 4096

// lookup resolves a slash path component by component, matching names
// case-insensitively (Windows file systems are; an exact match wins) and
// never through a symbolic link. It returns the entry of the last
// component.
func lookup(fsys fs.FS, p string) (string, fs.DirEntry, error) {
	cur := "."
	var entry fs.DirEntry
	for _, part := range strings.Split(p, "/") {
		entries, err := fs.ReadDir(fsys, cur)
		if err != nil {
			return "", nil, err
		}
		entry = nil
		for _, e := range entries {
			if e.Name() == part {
				entry = e
				break
			}
			if entry == nil && strings.EqualFold(e.Name(), part) {
				entry = e
			}
		}
		if entry == nil {
			return "", nil, fs.ErrNotExist
		}
		if entry.Type()&fs.ModeSymlink != 0 {
			return "", nil, errors.New("symbolic link")
		}
		cur = path.Join(cur, entry.Name())
	}
	return cur, entry, nil
}

// anyFile returns the first of paths that is an existing regular file.
func anyFile(fsys fs.FS, paths ...string) string {
	for _, p := range paths {
		if got, e, err := lookup(fsys, p); err == nil && e.Type().IsRegular() {
			return got
		}
	}
	return ""
}

// anyFileIn returns the first regular file directly in one of dirs whose
// name satisfies match.
func anyFileIn(fsys fs.FS, dirs []string, match func(string) bool) string {
	for _, d := range dirs {
		got, e, err := lookup(fsys, d)
		if err != nil || !e.IsDir() {
			continue
		}
		entries, err := fs.ReadDir(fsys, got)
		if err != nil {
			continue
		}
		for _, f := range entries {
			if f.Type().IsRegular() && match(f.Name()) {
				return path.Join(got, f.Name())
			}
		}
	}
	return ""
}

// findUnder searches dir depth-first in sorted order for a regular file
// whose name satisfies match, visiting at most limit entries.
func findUnder(fsys fs.FS, dir string, match func(string) bool, limit int) string {
	root, e, err := lookup(fsys, dir)
	if err != nil || !e.IsDir() {
		return ""
	}
	var found string
	visited := 0
	_ = fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		visited++
		if visited > limit {
			return fs.SkipAll
		}
		if d.Type().IsRegular() && match(d.Name()) {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// Present reports whether rel (slash-separated, validated by
// ParsePayloadList) names a regular file or a non-empty directory in fsys.
func Present(fsys fs.FS, rel string) bool {
	got, e, err := lookup(fsys, rel)
	if err != nil {
		return false
	}
	if e.Type().IsRegular() {
		return true
	}
	if !e.IsDir() {
		return false
	}
	entries, err := fs.ReadDir(fsys, got)
	return err == nil && len(entries) > 0
}
