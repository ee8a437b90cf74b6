// SVG charts for the HTML pages pfsim writes (report, sweep): no scripts, no
// network fetches.
#pragma once

#include <string>
#include <vector>

namespace pfsim {

struct Bar {
    std::string label;
    double value;
    int color;
};

// Horizontal bars, one per entry, scaled to the largest; with an <h2> title.
std::string bar_chart(const std::string& id, const std::string& title, const std::string& unit,
                      const std::vector<Bar>& bars);

struct Line {
    std::string label;
    std::vector<double> x, y;
    int color;
};

// Lines on shared axes (y from min(0, lowest) to highest); `x_unit` labels the
// x axis ends (x values shown divided by `x_scale`); `caption` goes under it.
std::string line_chart(const std::string& id, const std::string& title, const std::vector<Line>& lines,
                       const std::string& caption, const std::string& x_unit = "us", double x_scale = 1e3);

// A whole page around `body`; its title counts the plots once the page loads.
std::string html_page(const std::string& heading, const std::string& body);

}  // namespace pfsim
