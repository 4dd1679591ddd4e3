package e2e

import "github.com/chromedp/chromedp"

// colours are an element's computed text colour, the background it is drawn on (its own, or the
// nearest ancestor's that is not transparent) and their contrast ratio (WCAG 2: (L1 + 0.05) /
// (L2 + 0.05) of the relative luminances).
type colours struct {
	Color      string  `json:"color"`
	Background string  `json:"background"`
	Ratio      float64 `json:"ratio"`
}

// coloursOf reads the colours of the element the JavaScript expression el answers.
func ColoursOf(el string) chromedp.Action[colours] {
	return chromedp.Evaluate[colours](`(() => {
	const el = ` + el + `;
	const rgb = s => s.match(/[\d.]+/g).map(Number);
	let bg = 'rgb(255, 255, 255)';
	for (let e = el; e; e = e.parentElement) {
		const c = getComputedStyle(e).backgroundColor, v = rgb(c);
		if (v.length < 4 || v[3] > 0) { bg = c; break; }
	}
	const lum = s => {
		const [r, g, b] = rgb(s).slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const color = getComputedStyle(el).color;
	const [hi, lo] = [lum(color), lum(bg)].sort((a, b) => b - a);
	return {color, background: bg, ratio: (hi + 0.05) / (lo + 0.05)};
})()`)
}
