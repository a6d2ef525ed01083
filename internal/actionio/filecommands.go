package actionio

import (
	"bufio"
	"os"
	"strings"
)

// ReadFileCommands parses a GITHUB_OUTPUT or GITHUB_STATE file the way the
// runner does: "name=value" lines and "name<<DELIMITER" heredocs ending at a
// line equal to the delimiter. Later entries win. A missing file is an empty
// map. It is how in-process callers (the demo, tests) read an action's
// outputs exactly as a later workflow step would.
func ReadFileCommands(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok {
			out[name] = val
		}
	}
	return out, sc.Err()
}
