// Adversarial exactness: pairs within a few ulps of r, points on cell borders, large offsets. Every
// engine must agree with the double-precision brute force; the SIMD filters must never call a
// candidate "sure" unless the double rule agrees, and never drop one the double rule keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../src/engine_base.hpp"
#include "../src/float_band.hpp"
#include "../src/simd/block_filter.hpp"
#include "check_against_oracle.hpp"
#include "engine_cases.hpp"
#include "for_each_dim_type.hpp"
#include "rows_of.hpp"
#include "sanitized_build.hpp"

namespace {

using spatialhash::Engine;

/// Pairs (p, p + r (1 + k ulp) u) for random unit directions u, in float or double: most land
/// within a rounding error of r, so the float fast path must defer them to the double rule.
template <int Dim, class T>
datasets::Dataset near_radius_pairs(double r, double base, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 30.0 * r);
  std::uniform_int_distribution<int> ulps(-3, 3);
  datasets::Dataset d{"near_radius_pairs", {}, r};
  for (int pair = 0; pair < 300; ++pair) {
    std::array<double, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = base + u(g);
    const double length = r * (1.0 + ulps(g) * std::numeric_limits<T>::epsilon());
    datasets::add_pair_at_distance<Dim, T>(d, p, length, pair, g);
  }
  return d;
}

/// A lattice with spacing exactly r along each axis, far from the origin: every point sits on a
/// cell border (up to the cell margin) and has neighbors at exactly distance r.
template <int Dim>
datasets::Dataset border_lattice(double r, double base) {
  datasets::Dataset d = datasets::lattice<Dim>(Dim == 2 ? 20 : 8, r, 0.0, r, 1, base);
  d.name = "border_lattice";
  return d;
}

class Exactness : public ::testing::TestWithParam<spatialhash::Options> {
 protected:
  template <int Dim, class T>
  void run(const datasets::Dataset& d) {
    SCOPED_TRACE(d.name + " dim=" + std::to_string(Dim) +
                 (std::is_same_v<T, float> ? " float" : " double"));
    check_against_oracle<Dim, T>(GetParam(), d);
  }
};

TEST_P(Exactness, PairsWithinUlpsOfRadius) {
  // Under the sanitizers (these tests took a quarter of their run's CPU time) two radii of four
  // here and below, and four of six in TinyAndHugeRadii: the same offsets and kinds of radius.
  for (double r : fewer_when_sanitized({1.0 / 3.0, 2.5e-3, 1.0, 0.1}, 2)) {
    for (double base : {0.0, 1000.0, -5.0e4}) {
      run<2, float>(near_radius_pairs<2, float>(r, base, 1));
      run<3, float>(near_radius_pairs<3, float>(r, base, 2));
      run<2, double>(near_radius_pairs<2, double>(r, base, 3));
      run<3, double>(near_radius_pairs<3, double>(r, base, 4));
    }
  }
}

TEST_P(Exactness, PointsOnCellBordersAtLargeOffsets) {
  for (double r : fewer_when_sanitized({1.0 / 3.0, 2.0, 0.1, 0.5}, 2)) {
    for (double base : {0.0, -7.0, 596700.0}) {
      run<2, float>(border_lattice<2>(r, base));
      run<2, double>(border_lattice<2>(r, base));
      run<3, float>(border_lattice<3>(r, base));
      run<3, double>(border_lattice<3>(r, base));
    }
  }
}

/// Uniform points in a cube of edge 8r scaled down to radius r (the scale tests below): about 8
/// neighbors per point in 3D.
template <int Dim>
datasets::Dataset scaled_uniform(double r, std::uint64_t seed) {
  datasets::Dataset d = datasets::uniform<Dim>(Dim == 2 ? 300 : 400, 8.0, 1.0, seed);
  for (double& x : d.xyz) x *= r;
  d.radius = r;
  d.name = "scaled_uniform";
  return d;
}

// Radii whose float square is subnormal or zero (1e-23 squares to 1e-46, below float's smallest
// subnormal): the float band must then send every candidate near r to the double rule, not call
// it a neighbor for sure. And the ends of the supported range, where r^2 is still a normal double.
TEST_P(Exactness, TinyAndHugeRadii) {
  for (double r : fewer_when_sanitized(
           {1e-18, 1e-21, 1e-23, 4.0 * spatialhash::kMinRadius, 1e-30, 1e-40}, 4)) {
    run<2, float>(scaled_uniform<2>(r, 5));
    run<3, float>(scaled_uniform<3>(r, 6));
    run<3, double>(scaled_uniform<3>(r, 7));
    run<3, double>(near_radius_pairs<3, double>(r, 0.0, 8));
    run<2, float>(near_radius_pairs<2, float>(r, 0.0, 9));
  }
  run<3, float>(scaled_uniform<3>(1e30, 10));
  run<3, double>(scaled_uniform<3>(1e30, 10));
  // Beyond float's range the harness's float queries cannot be formed: pairs and lists only.
  for (double r : {1e150, spatialhash::kMaxRadius}) {
    for (const datasets::Dataset& d :
         {scaled_uniform<3>(r, 12), near_radius_pairs<3, double>(r, -3.0 * r, 13)}) {
      SCOPED_TRACE(d.name + " r=" + std::to_string(r));
      const spatialhash::Index<3, double> index(d.xyz, r, GetParam());
      const auto want = oracle::pairs<3>(d.xyz, r);
      std::vector<std::pair<std::size_t, std::size_t>> got;
      for (const spatialhash::Pair& p : index.pairs().pairs) got.emplace_back(p.first, p.second);
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want);
      const spatialhash::NeighborLists lists = index.neighbor_lists({.sorted = true});
      const auto want_lists = oracle::lists<3>(d.xyz, r);
      for (std::size_t i = 0; i < want_lists.size(); ++i) {
        const std::vector<std::size_t> row(lists.indices.begin() + lists.offsets[i],
                                           lists.indices.begin() + lists.offsets[i + 1]);
        ASSERT_EQ(row, want_lists[i]) << "row " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllEngines, Exactness, ::testing::ValuesIn(engine_cases()),
                         engine_case_label);

/// Runs a block filter on blocks of 1 to kBlockQueries queries, with each kind of skip, and checks
/// its verdicts against the double rule on the same float data: no candidate beyond r is called
/// sure, no neighbor is dropped, skipped candidates never appear.
template <int Dim>
void check_filter(spatialhash::detail::BlockFilterFn<Dim> filter, std::uint64_t seed) {
  using namespace spatialhash::detail;
  std::mt19937_64 g(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const double r = std::exp(std::uniform_real_distribution<double>(-5, 3)(g));
    const double extent = r * std::exp(std::uniform_real_distribution<double>(0, 12)(g));
    const std::size_t m = std::uniform_int_distribution<std::size_t>(0, 70)(g);
    const int queries = std::uniform_int_distribution<int>(1, kBlockQueries)(g);
    std::uniform_real_distribution<double> u(0.0, extent);
    QueryBlock<Dim> block;
    block.count = queries;
    block.after = trial % 3 == 1;
    for (int q = 0; q < queries; ++q) {
      for (int k = 0; k < Dim; ++k) block.position[q][k] = static_cast<float>(u(g));
      // Skips: none, one inside the range, or one past it.
      const int kind = (trial + q) % 3;
      block.skip[q] =
          kind == 0 && !block.after ? kSkipNone : static_cast<std::uint32_t>(m / (kind + 1));
    }
    std::array<std::vector<float>, Dim> axis;
    std::vector<std::uint32_t> ids(m);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t j = 0; j < m; ++j) {
      // Most candidates within a hair of distance r of one of the queries.
      const auto& center = block.position[j % static_cast<std::size_t>(queries)];
      std::array<double, Dim> dir;
      double norm = 0;
      for (int k = 0; k < Dim; ++k) norm += (dir[k] = normal(g)) * dir[k];
      const double length = j % 3 ? r * (1 + 1e-7 * normal(g)) : r * 1.5 * std::abs(normal(g));
      for (int k = 0; k < Dim; ++k) {
        axis[k].push_back(static_cast<float>(center[k] + length * dir[k] / std::sqrt(norm)));
      }
      ids[j] = static_cast<std::uint32_t>(1000 + j);
    }
    SoaView<Dim> view;
    for (int k = 0; k < Dim; ++k) view.axis[k] = axis[k].data();
    view.ids = ids.data();
    const FloatBand band = make_float_band(r, extent + 10 * r, Dim);
    const std::size_t stride = m + kFilterSlack;
    std::vector<std::uint32_t> sure(stride * kBlockQueries), border(stride * kBlockQueries);
    BlockOutput out{sure.data(), border.data(), stride};
    // Every fourth trial starts the range past its beginning (as half searches do); every fourth
    // other one tests it as up to kMaxRuns runs with gaps between them (as group searches do).
    const std::size_t begin =
        trial % 4 == 3 ? std::uniform_int_distribution<std::size_t>(0, m)(g) : 0;
    CandidateRuns runs;
    std::vector<bool> in_runs(m, false);
    if (trial % 4 == 1) {
      std::vector<std::uint32_t> cuts;
      for (int c = 0; c < 2 * kMaxRuns; ++c) {
        cuts.push_back(
            std::uniform_int_distribution<std::uint32_t>(0, static_cast<std::uint32_t>(m))(g));
      }
      std::sort(cuts.begin(), cuts.end());
      for (int i = 0; i < kMaxRuns; ++i) runs.add(cuts[2 * i], cuts[2 * i + 1]);
    } else {
      runs.add(static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(m));
    }
    for (int i = 0; i < runs.count; ++i) {
      for (std::uint32_t j = runs.run[i].begin; j < runs.run[i].end; ++j) in_runs[j] = true;
    }
    filter(view, runs, block, band, out);
    // A count search (no sure rows) counts what the full one stores, and writes the same borders.
    std::vector<std::uint32_t> count_border(stride * kBlockQueries);
    BlockOutput count_out{nullptr, count_border.data(), stride};
    filter(view, runs, block, band, count_out);
    for (int q = 0; q < queries; ++q) {
      ASSERT_EQ(count_out.sure_count[q], out.sure_count[q]) << "count search, query " << q;
      ASSERT_EQ(count_out.border_count[q], out.border_count[q]) << "count search, query " << q;
      for (std::size_t k = 0; k < out.border_count[q]; ++k) {
        ASSERT_EQ(count_border[q * stride + k], border[q * stride + k]);
      }
    }
    for (int q = 0; q < queries; ++q) {
      const auto skipped = [&](std::size_t j) {
        return !in_runs[j] || (block.after ? j <= block.skip[q] : j == block.skip[q]);
      };
      const auto exact_d2 = [&](std::size_t j) {
        double d2 = 0;
        for (int a = 0; a < Dim; ++a) {
          const double d = double(axis[a][j]) - double(block.position[q][a]);
          d2 += d * d;
        }
        return d2;
      };
      std::vector<bool> kept(m, false);
      for (std::size_t k = 0; k < out.sure_count[q]; ++k) {
        const std::size_t j = sure[q * stride + k] - 1000;
        ASSERT_LT(j, m);
        ASSERT_LE(exact_d2(j), r * r) << "filter called a candidate beyond r certain";
        ASSERT_FALSE(skipped(j)) << "filter reported a skipped candidate";
        ASSERT_FALSE(kept[j]) << "filter reported a candidate twice";
        kept[j] = true;
      }
      for (std::size_t k = 0; k < out.border_count[q]; ++k) {
        const std::size_t j = border[q * stride + k] - 1000;
        ASSERT_LT(j, m);
        ASSERT_FALSE(skipped(j)) << "filter reported a skipped candidate";
        ASSERT_FALSE(kept[j]) << "filter reported a candidate twice";
        kept[j] = true;
      }
      for (std::size_t j = 0; j < m; ++j) {
        if (exact_d2(j) <= r * r && !skipped(j)) {
          ASSERT_TRUE(kept[j]) << "filter dropped a neighbor, query " << q << " candidate " << j;
        }
      }
    }
  }
}

// The bounding box decides the lattice: a point outside it would fall off the lattice. The bounds
// pass reads packed points in blocks of lanes, one share per thread; an extreme point on either
// side of any axis, in the first block, the middle or the tail after the last whole block, packed
// or strided, must still find its neighbor (lists against the oracle).
TEST(Bounds, ExtremePointsInEveryLaneAndTheTail) {
  for_each_dim_type([]<int Dim, class T>() {
    const std::size_t n = 101;
    const double r = 0.7;
    std::mt19937_64 g(29);
    std::uniform_real_distribution<double> u(0.0, 4.0);
    for (std::size_t stride : {std::size_t{Dim}, std::size_t{Dim + 2}}) {
      for (int threads : {1, 2}) {
        for (std::size_t at : {std::size_t{0}, std::size_t{23}, std::size_t{50}, n - 1}) {
          for (int k = 0; k < Dim; ++k) {
            for (double side : {-40.0, 40.0}) {
              std::vector<T> data(n * stride, T{0});
              std::vector<double> xyz(n * Dim);
              for (std::size_t i = 0; i < n; ++i) {
                for (int a = 0; a < Dim; ++a) {
                  data[i * stride + static_cast<std::size_t>(a)] = static_cast<T>(u(g));
                }
              }
              // The extreme point and a neighbor of it, 0.5 inward along axis k.
              const std::size_t partner = (at + 1) % n;
              data[at * stride + static_cast<std::size_t>(k)] = static_cast<T>(side);
              for (int a = 0; a < Dim; ++a) {
                data[partner * stride + static_cast<std::size_t>(a)] =
                    data[at * stride + static_cast<std::size_t>(a)];
              }
              data[partner * stride + static_cast<std::size_t>(k)] =
                  static_cast<T>(side - std::copysign(0.5, side));
              for (std::size_t i = 0; i < n; ++i) {
                for (int a = 0; a < Dim; ++a) {
                  xyz[i * Dim + static_cast<std::size_t>(a)] =
                      static_cast<double>(data[i * stride + static_cast<std::size_t>(a)]);
                }
              }
              SCOPED_TRACE("dim " + std::to_string(Dim) + " stride " + std::to_string(stride) +
                           " threads " + std::to_string(threads) + " point " + std::to_string(at) +
                           " axis " + std::to_string(k) + " side " + std::to_string(side));
              // The box itself, against min and max in double.
              const auto box = spatialhash::detail::point_bounds(
                  spatialhash::PointsView<Dim, T>(data.data(), n, stride), threads);
              for (int a = 0; a < Dim; ++a) {
                double lo = xyz[static_cast<std::size_t>(a)], hi = lo;
                for (std::size_t i = 0; i < n; ++i) {
                  lo = std::min(lo, xyz[i * Dim + static_cast<std::size_t>(a)]);
                  hi = std::max(hi, xyz[i * Dim + static_cast<std::size_t>(a)]);
                }
                ASSERT_EQ(box.lower[static_cast<std::size_t>(a)], lo) << "axis " << a;
                ASSERT_EQ(box.upper[static_cast<std::size_t>(a)], hi) << "axis " << a;
              }
              const spatialhash::Index<Dim, T> index(
                  spatialhash::PointsView<Dim, T>(data.data(), n, stride), r, {.threads = threads});
              const auto rows = rows_of(index.neighbor_lists({.sorted = true}));
              ASSERT_EQ(rows, oracle::lists<Dim>(xyz, r));
              ASSERT_FALSE(rows[at].empty());
            }
          }
        }
      }
    }
  });
}

TEST(BlockFilter, ScalarNeverMisclassifies) {
  check_filter<2>(&spatialhash::detail::block_filter_scalar<2>, 1);
  check_filter<3>(&spatialhash::detail::block_filter_scalar<3>, 2);
}

TEST(BlockFilter, EverySimdLevelNeverMisclassifies) {
  using spatialhash::Simd;
  // Levels this machine lacks fall back to a lower one, which is then checked again.
  for (Simd level : {Simd::automatic, Simd::avx512, Simd::avx2}) {
    check_filter<2>(spatialhash::detail::best_block_filter<2>(level), 3);
    check_filter<3>(spatialhash::detail::best_block_filter<3>(level), 4);
  }
}

}  // namespace
