// Immutable text that copies share: a bucket's policy or CORS document runs to kilobytes,
// and the bucket record that holds it is copied for every request on the bucket
// (metadata's record cache hands out copies). A copy costs a reference count, and two
// copies of one text compare equal without reading it (ParsedSetting's per-request check).
// Assigning a new text never changes what earlier copies hold.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace strata {

class SharedText {
 public:
  SharedText() = default;
  // Implicit, so that the text is assigned as the std::string it used to be.
  SharedText(std::string text)  // NOLINT(google-explicit-constructor)
      : text_(text.empty() ? nullptr : std::make_shared<const std::string>(std::move(text))) {}
  SharedText(const char* text) : SharedText(std::string(text)) {}  // NOLINT

  const std::string& str() const { return text_ ? *text_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT
  std::string_view view() const { return str(); }
  bool empty() const { return text_ == nullptr; }
  std::size_t size() const { return str().size(); }
  void clear() { text_.reset(); }

  // Whether both hold the one stored text (copies of one another), which implies equal.
  bool SharesWith(const SharedText& other) const { return text_ == other.text_; }

  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.SharesWith(b) || a.view() == b.view();
  }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.view() == b; }
  friend std::ostream& operator<<(std::ostream& out, const SharedText& text) {
    return out << text.view();
  }

 private:
  static const std::string& Empty() {
    static const std::string empty;
    return empty;
  }

  std::shared_ptr<const std::string> text_;
};

}  // namespace strata
