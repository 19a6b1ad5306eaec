package forecast

import "time"

// Load is how many launches fall in each step of a horizon: Counts[i]
// counts those in [Start+i*Step, Start+(i+1)*Step).
type Load struct {
	Start  time.Time
	Step   time.Duration
	Counts []int
}

// Count forecasts the launches of jobs in each step of [start,
// start+horizon): per minute for the console's forecast, per second for a
// herd. Jobs whose counts depend on nothing but their schedule are
// computed once per schedule, so that ten thousand jobs written "* * * *
// *" (or, per minute, "H * * * * *") cost one.
func Count(jobs []Job, start time.Time, horizon, step time.Duration) Load {
	l := Load{Start: start, Step: step, Counts: make([]int, int((horizon+step-1)/step))}
	end := start.Add(horizon)
	shared := map[string]int{} // jobs by sharedKey
	var alone []Job
	first := map[string]Job{}
	for _, j := range jobs {
		k := j.sharedKey(step)
		if k == "" {
			alone = append(alone, j)
			continue
		}
		if shared[k] == 0 {
			first[k] = j
		}
		shared[k]++
	}
	add := func(j Job, n int) {
		for t := range j.Launches(start, end) {
			l.Counts[t.Sub(start)/step] += n
		}
	}
	for k, n := range shared {
		add(first[k], n)
	}
	for _, j := range alone {
		add(j, 1)
	}
	return l
}

// Total is the number of launches the load counts.
func (l Load) Total() int {
	n := 0
	for _, c := range l.Counts {
		n += c
	}
	return n
}

// Peak returns the start of the step with the most launches, the first
// such, and how many; a load with no launch has its start and 0.
func (l Load) Peak() (time.Time, int) {
	at, most := 0, 0
	for i, c := range l.Counts {
		if c > most {
			at, most = i, c
		}
	}
	return l.Start.Add(time.Duration(at) * l.Step), most
}
