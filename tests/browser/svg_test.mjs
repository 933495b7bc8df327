// svg_test.mjs - drive a stackfold SVG flame graph in Debian's chromium the
// way a user would, for tests/t61-svg-browser.sh.
//
//   node svg_test.mjs CHECKS.json
//
// CHECKS.json: {"svg": path, "shot": png path, "width": 1200,
//   "search": [{"term": re, "pct": "52.00"}...],   via the Search button
//   "ctrlf": {"term": re, "pct": "48.00"},          via Ctrl-F
//   "hover": name, "zoom": name, "hidden": name, "bookmark": {...},
//   "exact": {"zoom": name, "kids": [names of equal counts], "of": N}
//            (each kid 1/N of the zoomed frame, the first at its left),
//   "ic": {"term": re, "pct": "60.00"}, "badre": re,
//   "reset": true      (after the searches: the Reset Search button clears
//                       the result, the highlight and the URL, and hides),
//   "pin": true        (a graph taller than the window: the hover line and
//                       the match result are in view at the top and the
//                       bottom of the page)}
// A search entry may give "text", the whole #matched text, in place of pct.
// Prints one "PASS: ..." / "FAIL: ..." line per check (tests/lib.sh format)
// and exits 1 when anything failed.  Never downloads a browser.  Also checks
// that a zoom is kept in the URL and the bookmarked URL reopens zoomed.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let failed = 0;
function pass(name) { console.log(`PASS: ${name}`); }
function fail(name, ...why) {
	failed++;
	console.log(`FAIL: ${name}`);
	for (const w of why) console.log(`    ${w}`);
}
function checkEq(name, want, got) {
	if (want === got) pass(name);
	else fail(name, `expected: ${want}`, `actual:   ${got}`);
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stackfold-chromium-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update',
		'--disable-sync'],
	viewport: { width: cfg.width + 20, height: 700 },
});
const errors = [];
const requests = [];
try {
	const page = await ctx.newPage();
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	const url = 'file://' + path.resolve(cfg.svg);
	await page.goto(url);
	await page.waitForFunction(() => window.stackfold && window.stackfold.frames.length > 0,
		null, { timeout: 10000 });
	pass('script initialised');
	// every frame's start and count in samples (derived, or data-s) agree
	// with the x and width the writer drew (rounded to 0.1 px)
	const off = await page.evaluate(() => {
		const fs = window.stackfold.frames, px = (FG.W - 2 * FG.pad) / FG.total, bad = [];
		for (const f of fs)
			if (Math.abs(FG.pad + f.s * px - f.x) > 0.051 || Math.abs(f.n * px - f.w) > 0.101)
				bad.push(`${f.name} s=${f.s} n=${f.n} x=${f.x} w=${f.w}`);
		return bad.slice(0, 3).join('; ');
	});
	checkEq('every frame: samples agree with the drawn geometry', '', off);
	// the whole graph in the screenshots (fullPage hangs on SVG documents)
	const h = parseInt(await page.evaluate(() => document.documentElement.getAttribute('height')), 10);
	await page.setViewportSize({ width: cfg.width + 20, height: Math.min(h + 20, 4000) });

	// a frame by its function name (first in document order), found
	// through the page's own frame table: a text filter over tens of
	// thousands of <g>s is too slow
	const frame = async (name) => {
		const i = await page.evaluate((n) =>
			window.stackfold.frames.findIndex((f) => f.name === n), name);
		if (i < 0) throw new Error(`no frame named '${name}'`);
		return page.locator('#frames > g').nth(i);
	};
	const rectAttr = async (name, a) => (await frame(name)).locator('rect').getAttribute(a);

	// hover shows "Function: name (N samples, P%)"
	if (cfg.hover) {
		await (await frame(cfg.hover)).locator('rect').hover();
		const det = await page.textContent('#details');
		if (det.startsWith(`Function: ${cfg.hover} (`) && / samples, [0-9.]+%\)$/.test(det))
			pass(`hover shows details (${det})`);
		else fail('hover shows details', `got: ${det}`);
	}

	// search through the button and the prompt, as a user does
	for (const s of cfg.search) {
		page.once('dialog', (d) => d.accept(s.term));
		await page.click('#search');
		checkEq(`search button '${s.term}': matched share`, s.text || `Matched: ${s.pct}%`,
			(await page.textContent('#matched')).trim());
	}
	const magenta = () => page.$$eval('#frames rect', (rs) =>
		rs.filter((r) => r.getAttribute('fill') === 'rgb(230,0,230)').length);
	const hl = await magenta();
	if (hl > 0 || cfg.search.every((s) => s.text)) pass(`matches highlighted (${hl} frames)`);
	else fail('matches highlighted', 'no magenta frame');

	// Reset Search: shown while a search is on; clears it
	if (cfg.reset) {
		const shown = await page.$eval('#unsearch', (e) => !e.classList.contains('hide'));
		checkEq('Reset Search shown after a search', true, shown);
		await page.click('#unsearch');
		checkEq('Reset Search: result cleared', '', (await page.textContent('#matched')).trim());
		checkEq('Reset Search: no frame highlighted', 0, await magenta());
		checkEq('Reset Search: no search in the URL', false, /[?&]s=/.test(page.url()));
		checkEq('Reset Search: the button hides again', true,
			await page.$eval('#unsearch', (e) => e.classList.contains('hide')));
	}

	// a graph taller than the window: the result line stays in view
	if (cfg.pin) {
		await page.setViewportSize({ width: cfg.width + 20, height: 600 });
		page.once('dialog', (d) => d.accept(cfg.search.length ? cfg.search[0].term : '.'));
		await page.click('#search');
		for (const where of ['top', 'bottom']) {
			await page.evaluate((w) => window.scrollTo(0, w === 'top' ? 0 : document.documentElement.scrollHeight), where);
			await page.waitForTimeout(100);
			const box = await page.$eval('#matched', (e) => {
				const r = e.getBoundingClientRect();
				return { top: r.top, bottom: r.bottom, vh: window.innerHeight, H: FG.H };
			});
			const inView = box.top >= 0 && box.bottom <= box.vh;
			if (inView && box.H > box.vh) pass(`result line in view, scrolled to the ${where}`);
			else fail(`result line in view, scrolled to the ${where}`, JSON.stringify(box));
		}
		await page.keyboard.press('Escape');
	}

	// an invalid regular expression clears the previous search
	if (cfg.badre) {
		page.once('dialog', (d) => d.accept(cfg.badre));
		await page.click('#search');
		checkEq(`search '${cfg.badre}': says so`, 'Invalid regular expression',
			(await page.textContent('#matched')).trim());
		checkEq(`search '${cfg.badre}': no frame left highlighted`, 0, await magenta());
		checkEq(`search '${cfg.badre}': no search left in the URL`, false, /[?&]s=/.test(page.url()));
	}

	// ignore-case (Ctrl-I) is part of the bookmarked view
	if (cfg.ic) {
		await page.keyboard.press('Control+i');
		page.once('dialog', (d) => d.accept(cfg.ic.term));
		await page.click('#search');
		const want = `Matched: ${cfg.ic.pct}%`;
		checkEq(`ic: '${cfg.ic.term}' matched`, want, (await page.textContent('#matched')).trim());
		const icurl = page.url();
		checkEq('ic kept in the URL (ic=1)', true, /[?&]ic=1/.test(icurl));
		await page.goto(icurl);
		await page.waitForFunction(() => window.stackfold, null, { timeout: 10000 });
		checkEq('bookmarked ic search reopens the same', want, (await page.textContent('#matched')).trim());
		await page.keyboard.press('Control+i');
		await page.keyboard.press('Escape');
	}

	// a zoom is exact: frames of equal counts are equally wide, side by
	// side, in proportion to the zoomed frame (x and width in the file are rounded
	// to 0.1 px; a 10,000x zoom must not magnify that)
	if (cfg.exact) {
		const full = cfg.width - 20;
		await (await frame(cfg.exact.zoom)).locator('rect').click();
		const rs = [];
		for (const k of cfg.exact.kids)
			rs.push({ x: parseFloat(await rectAttr(k, 'x')), w: parseFloat(await rectAttr(k, 'width')) });
		rs.sort((a, b) => a.x - b.x);
		const each = full / (cfg.exact.of || rs.length);
		const bad = rs.filter((r) => Math.abs(r.w - each) > 0.02);
		checkEq(`zoom '${cfg.exact.zoom}': its ${rs.length} children of equal counts ${each.toFixed(2)} px wide each`,
			'', bad.map((r) => r.w.toFixed(2)).join(' '));
		let gap = 0;
		for (let i = 0; i < rs.length; i++)
			gap = Math.max(gap, Math.abs(rs[i].x - (10 + i * each)));
		checkEq(`zoom '${cfg.exact.zoom}': children side by side from the left edge`, true, gap <= 0.02);
		// a bookmark of one of them reopens on it, not on a sibling the
		// file draws at the same rounded x (until 2026-11-25 it did)
		if (cfg.exact.pick) {
			await (await frame(cfg.exact.pick)).locator('rect').click();
			const purl = page.url();
			await page.click('#unzoom');
			await page.goto(purl);
			await page.waitForFunction(() => window.stackfold, null, { timeout: 10000 });
			checkEq(`bookmarked zoom on '${cfg.exact.pick}' reopens on it`, full.toFixed(2),
				await rectAttr(cfg.exact.pick, 'width'));
		}
		await page.click('#unzoom');
	}

	// Ctrl-F opens the same prompt
	if (cfg.ctrlf) {
		page.once('dialog', (d) => d.accept(cfg.ctrlf.term));
		await page.keyboard.press('Control+f');
		checkEq(`Ctrl-F '${cfg.ctrlf.term}': matched share`, `Matched: ${cfg.ctrlf.pct}%`,
			(await page.textContent('#matched')).trim());
	}

	// click zooms: the frame becomes the full width, others outside hide
	if (cfg.zoom) {
	const full = (cfg.width - 20).toFixed(2);
	const before = await rectAttr(cfg.zoom, 'width');
	const geometry = () => page.$$eval('#frames > g', (gs) => gs.map((g) => {
		const r = g.querySelector('rect'), t = g.querySelector('text');
		return `${r.getAttribute('x')} ${r.getAttribute('width')} ${g.style.display} ${t ? t.textContent : ''}`;
	}).join('\n'));
	const geo0 = await geometry();
	await (await frame(cfg.zoom)).locator('rect').click();
	checkEq(`click '${cfg.zoom}': full width`, full, await rectAttr(cfg.zoom, 'width'));
	const hid = await (await frame(cfg.hidden)).evaluate((g) => g.style.display);
	checkEq(`click '${cfg.zoom}': '${cfg.hidden}' hidden`, 'none', hid);
	const unz = await page.$eval('#unzoom', (e) => e.classList.contains('hide'));
	checkEq('Reset Zoom shown while zoomed', false, unz);
	const zurl = page.url();
	checkEq('zoom kept in the URL (?f=)', true, /\?f=[0-9]+/.test(zurl));
	fs.mkdirSync(path.dirname(cfg.shot), { recursive: true });
	await page.screenshot({ path: cfg.shot.replace(/\.png$/, '-zoomed.png') });

	// a zoom inside the zoom (frames the first placed are hidden by the
	// second), then Reset Zoom restores the original geometry, every frame
	if (cfg.nested) {
		await (await frame(cfg.nested)).locator('rect').click();
		checkEq(`click '${cfg.nested}' inside the zoom: full width`, full, await rectAttr(cfg.nested, 'width'));
	}
	await page.click('#unzoom');
	checkEq(`Reset Zoom: '${cfg.zoom}' back to ${before}`, before, await rectAttr(cfg.zoom, 'width'));
	checkEq('Reset Zoom: every frame and label as first drawn', true, (await geometry()) === geo0);
	const shown = await (await frame(cfg.hidden)).evaluate((g) => g.style.display);
	checkEq(`Reset Zoom: '${cfg.hidden}' shown again`, '', shown);

	// opening the bookmarked URL zooms to the same frame
	await page.goto(zurl);
	await page.waitForFunction(() => window.stackfold, null, { timeout: 10000 });
	checkEq(`bookmarked zoom reopens on '${cfg.zoom}'`, full, await rectAttr(cfg.zoom, 'width'));
	await page.click('#unzoom');
	}

	// the view is bookmarkable: ?s= search restored on load
	if (cfg.bookmark) {
		await page.goto(url + '?s=' + encodeURIComponent(cfg.bookmark.term));
		await page.waitForFunction(() => window.stackfold, null, { timeout: 10000 });
		checkEq(`?s=${cfg.bookmark.term} restores the search`, `Matched: ${cfg.bookmark.pct}%`,
			(await page.textContent('#matched')).trim());
		page.once('dialog', (d) => d.accept(cfg.search[0].term));
		await page.click('#search');
	}
	await page.screenshot({ path: cfg.shot });
	pass(`screenshot saved (${cfg.shot})`);

	checkEq('no script errors', '', errors.join(' | '));
	checkEq('no network requests', '', requests.join(' '));
} catch (e) {
	fail('browser session', String(e && e.stack || e));
} finally {
	await ctx.close();
	fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
