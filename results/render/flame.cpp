// The differential flame graph page (results/render/flame.h).
#include "results/render/flame.h"

#include <fmt/format.h>

#include <kainjow/mustache.hpp>
#include <nlohmann/json.hpp>

namespace nightjar {
namespace {

namespace mu = kainjow::mustache;

// {{{...}}} holds only the vendored scripts and JSON made safe for a
// <script> element (script_json); everything else is escaped.
constexpr const char* kFlame = R"TPL(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
.legend span.swatch { display: inline-block; width: 1em; height: 1em; vertical-align: middle; margin: 0 0.3em 0 1em; border: 1px solid #999; }
.legend .more { background: rgb(220,60,60); }
.legend .fewer { background: rgb(60,60,220); }
.legend .only { background: rgb(255,190,90); }
.source { color: #555; font-size: 0.9em; }
.flame-graph { width: 100%; }
#details { min-height: 1.5em; font-family: monospace; }
</style>
<script>{{{d3}}}</script>
<script>{{{flamegraph}}}</script>
</head>
<body>
{{#back}}<p><a href="{{back}}">back</a></p>
{{/back}}<h1>{{title}}</h1>
<p class="legend"><span class="swatch more"></span>red: more in NEW ({{side}}) <span class="swatch fewer"></span>blue: fewer than BASE ({{base}}) <span class="swatch only"></span>orange: only in NEW</p>
<p class="source">Each frame is a call path of a side's stacks, merged over its iterations; its width is that side's samples. The colour is the difference NEW − BASE × (NEW samples / BASE samples), relative to the frame's samples: the deeper the colour the larger the difference. The first graph of a cell is NEW's stacks (paths only BASE sampled have no width there), the second BASE's with the same colours (paths only NEW sampled have none there). Click a frame to zoom.</p>
<p id="details"></p>
{{#graphs}}<section class="flame" data-side="{{side}}" data-cell="{{cell}}">
<h2>{{side}}: {{cell}}</h2>
<p class="samples">BASE ({{base}}): <span class="base-samples">{{base_samples}}</span> samples in {{base_n}} iteration(s) ({{base_event}}); NEW ({{side}}): <span class="new-samples">{{new_samples}}</span> samples in {{new_n}} iteration(s) ({{new_event}}){{#lost}}; lost {{.}}{{/lost}}</p>
<h3>NEW ({{side}}): its stacks, coloured by the difference</h3>
<div class="flame-graph new-graph" id="flame-{{i}}n"></div>
<script type="application/json" id="flame-data-{{i}}n">{{{json_new}}}</script>
<h3>BASE ({{base}}): its stacks, coloured by the same difference (what NEW lost is blue here)</h3>
<div class="flame-graph base-graph" id="flame-{{i}}b"></div>
<script type="application/json" id="flame-data-{{i}}b">{{{json_base}}}</script>
</section>
{{/graphs}}{{^graphs}}<p class="no-profiles">no cell has perf-profile samples on both sides</p>
{{/graphs}}<script>
(function () {
  function draw(div) {
    var base = div.id.charAt(div.id.length - 1) === 'b';
    var data = JSON.parse(document.getElementById('flame-data-' + div.id.substring(6)).textContent);
    var chart = flamegraph.default()
      .width(Math.max(div.clientWidth, 400))
      .cellHeight(18)
      .transitionDuration(0)
      .minFrameSize(1)
      .sort(true)
      .setDetailsElement(document.getElementById('details'))
      .setColorMapper(function (d, c) {
        // The mapper clamps |delta| to the frame's value and colours
        // delta === value orange: in NEW's graph a path BASE lacks. In
        // BASE's graph a frame NEW has twice or more of reaches it too:
        // there it is the deepest red instead, as the legend says.
        if (base && d.data.delta > 0 && d.data.delta >= d.value) return 'rgb(220,0,0)';
        return flamegraph.colorMapper.differentialColorMapper(d, c);
      })
      .setLabelHandler(function (d) {
        var delta = d.data.delta, now = base ? d.data.other : d.data.value;
        var was = base ? d.data.value : d.data.other;
        return d.data.name + ': NEW ' + now + ' samples, BASE ' + was + ', NEW − BASE ' +
          (delta >= 0 ? '+' : '') + delta.toFixed(1) + ' (BASE scaled to NEW\'s total)';
      });
    d3.select(div).datum(data).call(chart);
    // The first drawing grows each frame's width in a 250 ms transition;
    // an update at once replaces it by one of transitionDuration (0), so the
    // frames have their widths at the first tick (a screenshot or a print
    // of the page right after load shows them whole).
    chart.update();
  }
  var graphs = document.querySelectorAll('.flame-graph');
  for (var i = 0; i < graphs.length; i++) draw(graphs[i]);
})();
</script>
</body>
</html>
)TPL";

// The graph of NEW's stacks (`base_side` false: value = NEW's samples) or
// of BASE's (value = BASE's samples); the other side's count is "other".
nlohmann::ordered_json node_json(const FlameNode& n, bool base_side) {
  nlohmann::ordered_json j;
  j["name"] = n.name;
  j["value"] = base_side ? n.base : n.now;
  j["other"] = base_side ? n.now : n.base;
  j["delta"] = n.delta;
  nlohmann::ordered_json children = nlohmann::ordered_json::array();
  for (const auto& c : n.children)
    if ((base_side ? c.base : c.now) > 0)
      children.push_back(node_json(c, base_side));  // no width: not drawn
  j["children"] = std::move(children);
  return j;
}

// JSON for a <script> element: '<' as \u003c (JSON's structure has none, so
// this only touches strings), so that no "</script>" can end it.
std::string script_json(const FlameNode& root, bool base_side) {
  const std::string text =
      node_json(root, base_side).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

bool has_flame_graphs(const WhyBlock& block) {
  for (const auto& side : block.sides)
    for (const auto& d : side.profiles)
      if (d.flame.now > 0) return true;
  return false;
}

std::string render_flame_html(const WhyBlock& block, const std::string& title,
                              const std::string& back) {
  mu::data graphs{mu::data::type::list};
  std::string base, side;
  int i = 0;
  for (const auto& s : block.sides) {
    if (base.empty()) base = s.base;
    side += (side.empty() ? "" : ", ") + s.side;
    for (const auto& d : s.profiles) {
      if (d.flame.now == 0) continue;
      mu::data g;
      g.set("i", std::to_string(i++));
      g.set("side", s.side);
      g.set("base", s.base);
      g.set("cell", d.cell);
      g.set("base_samples", std::to_string(d.base_samples));
      g.set("new_samples", std::to_string(d.new_samples));
      g.set("base_n", std::to_string(d.base_n));
      g.set("new_n", std::to_string(d.new_n));
      g.set("base_event", d.base_event.empty() ? "no samples" : d.base_event);
      g.set("new_event", d.new_event);
      if (d.base_lost + d.new_lost > 0)
        g.set("lost", fmt::format("{} BASE, {} NEW", d.base_lost, d.new_lost));
      g.set("json_new", script_json(d.flame, false));
      g.set("json_base", script_json(d.flame, true));
      graphs.push_back(g);
    }
  }
  mu::data page;
  page.set("title", title);
  page.set("base", base);
  page.set("side", side);
  if (!back.empty()) page.set("back", back);
  page.set("d3", vendor_d3_js());
  page.set("flamegraph", vendor_flamegraph_js());
  page.set("graphs", graphs);
  mu::mustache tpl{std::string(kFlame)};
  return tpl.render(page);
}

}  // namespace nightjar
