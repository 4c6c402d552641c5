// Result classes and the check column.
#include "agreement.hpp"

#include <algorithm>
#include <cstdio>

namespace bench {

namespace {

bool same(const Digest& a, const Digest& b) {
  return a.total == b.total && a.fingerprint == b.fingerprint && a.per_item == b.per_item;
}

/// Sum over items of |a_i - b_i| and the number of items that differ (missing items count).
std::pair<std::uint64_t, std::size_t> difference(const Digest& a, const Digest& b) {
  std::uint64_t sum = 0;
  std::size_t items = 0;
  const std::size_t common = std::min(a.per_item.size(), b.per_item.size());
  for (std::size_t i = 0; i < common; ++i) {
    const std::uint32_t x = a.per_item[i], y = b.per_item[i];
    sum += x > y ? x - y : y - x;
    items += x != y;
  }
  items += std::max(a.per_item.size(), b.per_item.size()) - common;
  return {sum, items};
}

std::string stats(Op op, const Digest& d) {
  if (d.per_item.empty()) return "";
  const std::uint32_t most = *std::max_element(d.per_item.begin(), d.per_item.end());
  const double mean = (op == Op::pairs ? 2.0 : 1.0) * static_cast<double>(d.total) /
                      static_cast<double>(d.per_item.size());
  char text[96];
  std::snprintf(text, sizeof text, "%s per %s: mean %.1f, max %u",
                is_ball(op) ? "hits" : "neighbors", is_ball(op) ? "query" : "point", mean, most);
  return text;
}

}  // namespace

void Agreement::add(std::span<const Row> group, std::size_t row, Digest digest) {
  const Row& r = group[row];
  if (!r.ours) {
    outsiders_.emplace_back(row, std::move(digest));
    return;
  }
  const bool oracle = r.engine == "brute_force";
  for (Class& c : classes_) {
    if (same(c.digest, digest)) {
      c.rows.push_back(row);
      c.oracle = c.oracle || oracle;
      return;
    }
  }
  classes_.push_back(Class{std::move(digest), {row}, oracle});
}

std::string Agreement::finish(std::span<Row> group, Op op) {
  if (op == Op::build) return "";
  if (classes_.empty()) {
    for (auto& [row, digest] : outsiders_) group[row].check = "unchecked";
    return "no engine of ours ran: nothing to check against";
  }
  std::size_t ref = 0;
  for (std::size_t k = 0; k < classes_.size(); ++k) {
    const Class& c = classes_[k];
    const Class& best = classes_[ref];
    if (c.oracle != best.oracle ? c.oracle : c.rows.size() > best.rows.size()) ref = k;
  }
  const Class& reference = classes_[ref];
  std::string ref_name = reference.oracle ? "brute_force" : group[reference.rows[0]].engine;
  for (std::size_t k = 0; k < classes_.size(); ++k) {
    for (const std::size_t row : classes_[k].rows) {
      Row& r = group[row];
      if (k == ref) {
        r.check = "ok";
        continue;
      }
      const auto [sum, items] = difference(classes_[k].digest, reference.digest);
      r.failure = true;
      r.mismatch = sum;
      r.check = "DIFFERS from " + ref_name + ": total " + std::to_string(classes_[k].digest.total) +
                " vs " + std::to_string(reference.digest.total) + ", " + std::to_string(items) +
                " counts differ" + (sum == 0 ? " (same counts, other neighbors)" : "");
    }
  }
  for (auto& [row, digest] : outsiders_) {
    Row& r = group[row];
    if (same(digest, reference.digest)) {
      r.check = "ok";
      continue;
    }
    const auto [sum, items] = difference(digest, reference.digest);
    r.mismatch = sum;
    char text[128];
    std::snprintf(text, sizeof text, "mismatch %llu (%.2g of %llu; float distances)",
                  static_cast<unsigned long long>(sum),
                  reference.digest.total
                      ? static_cast<double>(sum) / static_cast<double>(reference.digest.total)
                      : 0.0,
                  static_cast<unsigned long long>(reference.digest.total));
    r.check = text;
  }
  std::string note = stats(op, reference.digest);
  std::size_t ours = 0;
  for (const Class& c : classes_) ours += c.rows.size();
  note += note.empty() ? "" : "; ";
  if (classes_.size() == 1) {
    note += "all " + std::to_string(ours) + " runs of ours agree" +
            (reference.oracle ? " (brute_force among them)" : "");
  } else {
    note += "reference: " + (reference.oracle
                                 ? std::string("brute_force (oracle)")
                                 : ref_name + "'s class, " + std::to_string(reference.rows.size()) +
                                       " of " + std::to_string(ours) + " runs");
  }
  return note;
}

}  // namespace bench
