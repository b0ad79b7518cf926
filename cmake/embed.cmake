# embed.cmake - one text file as a C string, so that a program carries a
# script whose source stays readable and runnable in the tree:
#   cmake -DIN=FILE -DOUT=FILE.c -DNAME=SYMBOL -DHEADER=H -P embed.cmake
file(READ "${IN}" text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\n" "\\n\"\n\"" text "${text}")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/embed.cmake */\n#include \"${HEADER}\"\n\nconst char ${NAME}[] = \"${text}\";\n")
