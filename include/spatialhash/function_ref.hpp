// FunctionRef: a non-owning, non-allocating reference to a callable, used for result callbacks.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace spatialhash {

template <class Signature>
class FunctionRef;

/// Refers to a callable for the duration of one call; never allocates. The referenced callable
/// must outlive the FunctionRef (true for a lambda passed straight into a query).
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>)
      FunctionRef(
          F&& f)  // NOLINT(google-explicit-constructor): implicit by design, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace spatialhash
