package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The control socket: one command per line, one answer line each.
//
//	arm <before|after> <op|any> <nth> <path regexp>  -> "armed", later "fired <op> <path>"
//	fill <bytes> <enospc_count>                      -> "ok": ENOSPC after <bytes> more, EIO after <enospc_count> of them
//	free                                             -> "ok": the disk has room again
//	stats                                            -> one JSON line of counters
//	cut                                              -> "cut": power off; the process exits after answering
//	unmount                                          -> "unmounted": a clean shutdown, everything kept

type controller struct {
	shared   *shared
	powerOff func(lose bool) error
}

func (c *controller) serve(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go c.session(conn)
	}
}

func (c *controller) session(conn net.Conn) {
	defer conn.Close()
	var mu sync.Mutex
	reply := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(conn, line)
	}
	scanner := bufio.NewScanner(conn)
	for scanner.Scan() {
		answer, after := c.command(splitCommand(scanner.Text()), reply)
		reply(answer)
		if after != nil {
			after()
		}
	}
}

// command runs one command; after, if set, runs once the answer is sent (cut and unmount end the process).
func (c *controller) command(args []string, reply func(string)) (answer string, after func()) {
	if len(args) == 0 {
		return "error: empty command", nil
	}
	f := c.shared.faults
	switch {
	case args[0] == "arm" && len(args) == 5:
		t, err := parseTrigger(args[1:])
		if err != nil {
			return "error: " + err.Error(), nil
		}
		go func() { reply("fired " + <-t.fired) }()
		f.arm(t)
		return "armed", nil
	case args[0] == "disarm" && len(args) == 1:
		if f.disarm() {
			return "frozen", nil
		}
		return "disarmed", nil
	case args[0] == "fill" && len(args) == 3:
		room, err1 := strconv.ParseInt(args[1], 10, 64)
		count, err2 := strconv.ParseInt(args[2], 10, 64)
		if err1 != nil || err2 != nil || room < 0 || count < 0 {
			return "error: fill takes two non-negative integers", nil
		}
		f.fill(room, count)
		return "ok", nil
	case args[0] == "free" && len(args) == 1:
		f.free()
		return "ok", nil
	case args[0] == "stats" && len(args) == 1:
		line, _ := json.Marshal(f.snapshot())
		return string(line), nil
	case args[0] == "cut" && len(args) == 1:
		return c.shutdown(true, "cut")
	case args[0] == "unmount" && len(args) == 1:
		return c.shutdown(false, "unmounted")
	}
	return fmt.Sprintf("error: unknown command %q", strings.Join(args, " ")), nil
}

func (c *controller) shutdown(lose bool, done string) (string, func()) {
	if err := c.powerOff(lose); err != nil {
		return "error: " + err.Error(), nil
	}
	return done, exitNow
}

// splitCommand splits on spaces, except that arm's last argument, a regexp, is the rest of the line.
func splitCommand(line string) []string {
	if strings.HasPrefix(line, "arm ") {
		return strings.SplitN(line, " ", 5)
	}
	return strings.Fields(line)
}

func parseTrigger(args []string) (*trigger, error) {
	when, op := args[0], args[1]
	if when != "before" && when != "after" {
		return nil, fmt.Errorf("arm: %q is neither before nor after", when)
	}
	nth, err := strconv.Atoi(args[2])
	if err != nil || nth < 1 {
		return nil, fmt.Errorf("arm: nth must be a positive integer, not %q", args[2])
	}
	re, err := regexp.Compile(args[3])
	if err != nil {
		return nil, fmt.Errorf("arm: %v", err)
	}
	return &trigger{when: when, op: op, nth: nth, path: re, fired: make(chan string, 1)}, nil
}
