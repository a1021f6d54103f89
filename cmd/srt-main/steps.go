package main

import (
	"encoding/json"
	"os"
	"sync"
	"time"
)

// processStart is when this process started running Go code: the steps of
// a run are timed from it.
var processStart = time.Now()

// stepTimes records when each step of a run ended, in ms since start
// (the process's, or the command's arrival at the warm server), and
// appends them to a file as one JSON object when srt ends
// (SRT_STEP_TIMES=FILE; the start-up benchmark reads them).
type stepTimes struct {
	file  string
	start time.Time
	mu    sync.Mutex
	steps []stepTime
}

type stepTime struct {
	Step string  `json:"step"`
	Ms   float64 `json:"ms"`
}

func newStepTimes(file string, start time.Time) *stepTimes {
	t := &stepTimes{file: file, start: start}
	t.step("options read")
	return t
}

func (t *stepTimes) step(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps = append(t.steps, stepTime{name, float64(time.Since(t.start).Microseconds()) / 1000})
}

// write appends the run's steps, with the end, as one line.
func (t *stepTimes) write() {
	t.step("end")
	t.mu.Lock()
	defer t.mu.Unlock()
	b, err := json.Marshal(t.steps)
	if err != nil {
		return
	}
	f, err := os.OpenFile(t.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}
