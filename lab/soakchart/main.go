// Command soakchart draws the CSV of `sundial-lab bench --soak` as an SVG: the
// database's bytes on disk (file, and file plus WAL) and the process's RSS
// and Go heap, over the run's minutes.
//
//	go run ./lab/soakchart < soak.csv > docs/soak.svg
package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

type series struct {
	name, colour string
	column       string
	plusColumn   string // added to column, if set
}

type panel struct {
	title  string
	series []series
}

var panels = []panel{
	{"database on disk (MiB)", []series{{"file", "#1f77b4", "db_bytes", ""}, {"file + WAL", "#9ecae1", "db_bytes", "wal_bytes"}}},
	{"memory (MiB)", []series{{"RSS", "#d62728", "rss_bytes", ""}, {"Go heap in use", "#ff9896", "heap_bytes", ""}}},
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soakchart:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	rows, err := csv.NewReader(in).ReadAll()
	if err != nil {
		return err
	}
	if len(rows) < 3 {
		return fmt.Errorf("want a header and at least two samples, got %d rows", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	value := func(r []string, name string) (float64, error) {
		i, ok := col[name]
		if !ok {
			return 0, fmt.Errorf("no column %q", name)
		}
		return strconv.ParseFloat(r[i], 64)
	}
	const w, h, left, top, gap = 720.0, 220.0, 60.0, 30.0, 50.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n",
		left+w+20, top+float64(len(panels))*(h+gap)+10)
	last, err := value(rows[len(rows)-1], "seconds")
	if err != nil {
		return err
	}
	for p, pn := range panels {
		y0 := top + float64(p)*(h+gap)
		var ymax float64
		data := make([][][2]float64, len(pn.series))
		for si, s := range pn.series {
			for _, r := range rows[1:] {
				x, err := value(r, "seconds")
				if err != nil {
					return err
				}
				v, err := value(r, s.column)
				if err != nil {
					return err
				}
				if s.plusColumn != "" {
					pv, err := value(r, s.plusColumn)
					if err != nil {
						return err
					}
					v += pv
				}
				v /= 1 << 20
				ymax = max(ymax, v)
				data[si] = append(data[si], [2]float64{x, v})
			}
		}
		ymax *= 1.1
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", left, y0-8, pn.title)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", left, y0, w, h)
		for i := 0; i <= 4; i++ {
			v := ymax * float64(i) / 4
			y := y0 + h - h*float64(i)/4
			fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.0f</text>`+"\n", left-5, y+4, v)
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", left, left+w, y, y)
		}
		for m := 0.0; m <= last/60; m += max(1, float64(int(last/60/10))) {
			x := left + w*m*60/last
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%.0f min</text>`+"\n", x, y0+h+15, m)
		}
		for si, s := range pn.series {
			var pts []string
			for _, d := range data[si] {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", left+w*d[0]/last, y0+h-h*d[1]/ymax))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.colour, strings.Join(pts, " "))
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", left+w-150, y0+18+float64(si)*16, s.colour, s.name)
		}
	}
	b.WriteString("</svg>\n")
	_, err = io.WriteString(out, b.String())
	return err
}
