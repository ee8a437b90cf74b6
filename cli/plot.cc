#include "cli/plot.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "cli/text.h"

namespace pfsim {

namespace {

const char* kColors[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"};

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

}  // namespace

std::string bar_chart(const std::string& id, const std::string& title, const std::string& unit,
                      const std::vector<Bar>& bars) {
    const int row = 22, left = 260, width = 420;
    const int height = static_cast<int>(bars.size()) * row + 40;
    double top = 0;
    for (const Bar& b : bars) top = std::max(top, b.value);
    std::ostringstream os;
    os << "<h2>" << markup_escape(title) << "</h2>\n<svg data-plot=\"" << id << "\" width=\"" << left + width + 120
       << "\" height=\"" << height << "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">\n";
    for (size_t i = 0; i < bars.size(); ++i) {
        const int y = 20 + static_cast<int>(i) * row;
        const double w = top > 0 ? bars[i].value / top * width : 0;
        os << "<text x=\"" << left - 6 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << markup_escape(bars[i].label) << "</text>"
           << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << num(w) << "\" height=\"" << row - 6
           << "\" fill=\"" << kColors[bars[i].color % 6] << "\"/>"
           << "<text x=\"" << left + w + 6 << "\" y=\"" << y + 14 << "\">" << num(bars[i].value) << " " << unit << "</text>\n";
    }
    os << "</svg>\n";
    return os.str();
}

std::string line_chart(const std::string& id, const std::string& title, const std::vector<Line>& lines,
                       const std::string& x_caption, const std::string& x_unit, double x_scale) {
    const int left = 60, top = 20, width = 640, height = 220;
    double xmin = 1e300, xmax = -1e300, ymin = 0, ymax = 0;
    for (const Line& l : lines) {
        for (double v : l.x) xmin = std::min(xmin, v), xmax = std::max(xmax, v);
        for (double v : l.y) ymin = std::min(ymin, v), ymax = std::max(ymax, v);
    }
    if (xmax <= xmin) xmax = xmin + 1;
    if (ymax <= ymin) ymax = ymin + 1;
    auto y_at = [&](double v) { return top + height - (v - ymin) / (ymax - ymin) * height; };
    std::ostringstream os;
    os << "<h2>" << markup_escape(title) << "</h2>\n<svg data-plot=\"" << id << "\" width=\"" << left + width + 200
       << "\" height=\"" << top + height + 40 << "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">\n"
       << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width << "\" height=\"" << height
       << "\" fill=\"none\" stroke=\"#999\"/>\n"
       << "<text x=\"" << left - 6 << "\" y=\"" << top + 10 << "\" text-anchor=\"end\">" << num(ymax) << "</text>"
       << "<text x=\"" << left - 6 << "\" y=\"" << top + height << "\" text-anchor=\"end\">" << num(ymin) << "</text>"
       << "<line x1=\"" << left << "\" x2=\"" << left + width << "\" y1=\"" << num(y_at(0)) << "\" y2=\""
       << num(y_at(0)) << "\" stroke=\"#ccc\"/>"
       << "<text x=\"" << left << "\" y=\"" << top + height + 16 << "\">" << num(xmin / x_scale) << " " << x_unit
       << "</text><text x=\"" << left + width << "\" y=\"" << top + height + 16 << "\" text-anchor=\"end\">"
       << num(xmax / x_scale) << " " << x_unit << "</text><text x=\"" << left + width / 2 << "\" y=\"" << top + height + 32
       << "\" text-anchor=\"middle\">" << markup_escape(x_caption) << "</text>\n";
    for (size_t k = 0; k < lines.size(); ++k) {
        const Line& l = lines[k];
        os << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << kColors[l.color % 6] << "\" points=\"";
        for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
            os << num(left + (l.x[i] - xmin) / (xmax - xmin) * width) << "," << num(y_at(l.y[i])) << " ";
        }
        os << "\"/><text x=\"" << left + width + 10 << "\" y=\"" << top + 14 + 16 * static_cast<int>(k) << "\" fill=\""
           << kColors[l.color % 6] << "\">" << markup_escape(l.label) << "</text>\n";
    }
    os << "</svg>\n";
    return os.str();
}

std::string html_page(const std::string& heading, const std::string& body) {
    return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + markup_escape(heading) +
           "</title>\n<style>body{font-family:sans-serif;margin:24px;max-width:1000px}h2{font-size:16px;"
           "margin-top:28px}td{padding:2px 10px}</style></head><body>\n<h1>" +
           markup_escape(heading) + "</h1>\n" + body +
           "<script>document.title = '" + markup_escape(heading) +
           ": ' + document.querySelectorAll('svg[data-plot]').length + ' plots';</script>\n</body></html>\n";
}

}  // namespace pfsim
