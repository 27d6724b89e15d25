# cmake -DIN=file -DOUT=file.inc -DNAME=Symbol -P EmbedText.cmake
# Writes IN as a C++ raw string literal: `static const char NAME[] = R"...";`.
# The delimiter cannot occur in PTX (generated text of one assembler).
file(READ "${IN}" TEXT)
string(FIND "${TEXT}" ")ASTRA_EMBED\"" CLASH)
if(NOT CLASH EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's delimiter")
endif()
file(WRITE "${OUT}.tmp" "static const char ${NAME}[] = R\"ASTRA_EMBED(${TEXT})ASTRA_EMBED\";\n")
file(RENAME "${OUT}.tmp" "${OUT}")
