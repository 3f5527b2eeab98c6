#include "category_colors.h"

#include <cctype>

#include "figure_builder.h"
#include "lengen/engine/encodings.h"

namespace lengen::figures {

namespace {
std::string lower(std::string s)
{
    for (auto& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
}  // namespace

// The encoding's row that `value` names (name, display name or position type, any case), -1
// when none.
static int encodingRow(const std::string& value)
{
    const auto& table = engine::encodingTable();
    const std::string v = lower(value);
    for (size_t i = 0; i < table.size(); ++i)
        if (lower(table[i].name) == v || lower(table[i].display) == v ||
            (!table[i].type.empty() && lower(table[i].type) == v))
            return int(i);
    if (const auto* e = engine::findEncoding(value))  // "gpt" for gpt2
        return int(e - table.data());
    return -1;
}

std::string encodingColor(const std::string& value)
{
    const int row = encodingRow(value);
    return row < 0 ? std::string() : plots::runPaletteColor(row);
}

std::string categoryColor(const std::string& value)
{
    const int row = encodingRow(value);
    if (row < 0)
        return plots::categoryColor(value);
    plots::fixCategoryColor(value, row);  // the swatches of its group's runs read it there
    return plots::runPaletteColor(row);
}

}  // namespace lengen::figures
