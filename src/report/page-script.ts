/**
 * The page's own script: draws each chart spec with uPlot. Kept to plain ES2017 for any browser. While no point
 * is hovered (a screenshot, a printed page, the pointer elsewhere) each legend says what its series did over the
 * whole run; hovered, the values of that second.
 */
export const pageScript = `
(function () {
  var charts = JSON.parse(document.getElementById('report-data').textContent);
  var drawn = [];
  // x = 1/(1-p): 2 is the median, 10 p90, 100 p99; labelled only at those. uPlot's own filter on a log axis
  // would keep only powers of ten and drop the median's label.
  var pctLabel = function (x) {
    if (!(x >= 1.999)) return '';
    var p = 100 * (1 - 1 / x);
    return (Math.round(p * 1000) / 1000) + '%';
  };
  var pad = function (n) { return (n < 10 ? '0' : '') + n; };
  var clock = function (v) { var d = new Date(v * 1000); return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()); };
  var number = function (v) { return v.toLocaleString('en-US', { maximumFractionDigits: Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2 }); };
  var fromZero = function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; };
  charts.forEach(function (c) {
    var el = document.getElementById('chart-' + c.id);
    var width = el.clientWidth || 600;
    var percentile = c.kind === 'percentile';
    var xMax = c.x[c.x.length - 1];
    var span = percentile ? 'whole run' : clock(c.x[0]) + '–' + clock(xMax);
    var opts = {
      width: width,
      height: 240,
      padding: [8, 28, 0, 4],
      scales: percentile
        ? { x: { time: false, distr: 3, log: 10, range: function () { return [1, xMax]; } }, y: { range: fromZero } }
        : { x: { time: false }, y: { range: fromZero } },
      series: [{ label: percentile ? 'percentile' : 'time', value: function (u, v, si, idx) { return idx == null ? span : v == null ? '' : percentile ? pctLabel(v) : clock(v); } }].concat(c.series.map(function (s) {
        return {
          label: s.label,
          stroke: s.color,
          width: s.width || 1.5,
          dash: s.dash,
          spanGaps: false,
          points: { show: c.x.length < 3 },
          value: function (u, v, si, idx) { return idx == null ? s.legend : v == null ? '' : number(v); },
        };
      })),
      axes: [
        percentile
          ? { filter: function (u, splits) { return splits; }, splits: function () { var out = []; for (var x = 2; x <= xMax; x = x === 2 ? 10 : x * 10) out.push(x); return out; }, values: function (u, vals) { return vals.map(pctLabel); } }
          // Whole seconds only: the points are seconds, a tick between them would mean nothing.
          : { incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400], values: function (u, vals) { return vals.map(clock); } },
        // As wide as its longest label (0.125 MB/s), so none is cut at the chart's left edge.
        { size: function (u, vals) { return 16 + 7 * (vals || []).reduce(function (m, v) { return Math.max(m, String(v).length); }, 4); }, values: function (u, vals) { return vals.map(function (v) { return v + (c.unit && c.unit !== '/s' ? ' ' + c.unit : ''); }); } },
      ],
      // A dashed line has a dashed marker in the legend too.
      legend: { live: true, markers: { dash: function (u, i) { return u.series[i].dash ? 'dashed' : 'solid'; } } },
    };
    var u = new uPlot(opts, [c.x].concat(c.series.map(function (s) { return s.values; })), el);
    drawn.push({ id: c.id, points: c.x.length, series: c.series.length, chart: u });
  });
  // A printed page is narrower than the window the charts were drawn for: drawn again to the width they get,
  // else the right-hand column is cut off at the page's edge.
  var fit = function () {
    drawn.forEach(function (d) {
      var width = document.getElementById('chart-' + d.id).clientWidth;
      if (width > 0 && width !== d.chart.width) d.chart.setSize({ width: width, height: d.chart.height });
    });
  };
  window.addEventListener('resize', fit);
  window.addEventListener('beforeprint', fit);
  if (window.matchMedia) window.matchMedia('print').addListener(fit);
  window.vespaBulkReport = { charts: drawn };
})();
`;
