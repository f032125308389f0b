(function () {
  "use strict";
  var node = document.getElementById("acceval-charts");
  var specs = node ? JSON.parse(node.textContent) : [];
  var drawn = 0;
  specs.forEach(function (s) {
    var el = document.getElementById(s.id);
    if (!el || typeof Plotly === "undefined") { return; }
    Plotly.newPlot(el, s.figure.data, s.figure.layout,
                   {displaylogo: false, responsive: true});
    drawn += 1;
  });
  document.documentElement.setAttribute("data-charts-drawn", String(drawn));
})();
