# Writes the contents of IN as a C++ raw string returned by strata::EmbeddedDefaultConfig().
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "#include \"common/config.h\"\nnamespace strata {\nstd::string_view EmbeddedDefaultConfig() {\n  static const char kText[] = R\"strata_toml(${CONTENT})strata_toml\";\n  return {kText, sizeof(kText) - 1};\n}\n}  // namespace strata\n")
