# The man pages cfapkg(1) and cfapkg-recipes(5), made at build time from
# docs/cli.md and docs/recipes.md by scripts/md2man, so that they are the
# documentation and never a copy of it drifting away.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(CFAPKG_MAN_DIR ${CMAKE_CURRENT_BINARY_DIR}/man)
set(md2man ${PROJECT_SOURCE_DIR}/scripts/md2man)
add_custom_command(
  OUTPUT ${CFAPKG_MAN_DIR}/cfapkg.1 ${CFAPKG_MAN_DIR}/cfapkg-recipes.5
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CFAPKG_MAN_DIR}
  COMMAND ${Python3_EXECUTABLE} ${md2man} ${PROJECT_SOURCE_DIR}/docs/cli.md
          ${CFAPKG_MAN_DIR}/cfapkg.1 --name cfapkg --section 1
          --summary "assemble the parts that run CUDA-only software on AMD GPUs"
          --version ${PROJECT_VERSION} --commands ${PROJECT_SOURCE_DIR}/pkgtool/main.c
  COMMAND ${Python3_EXECUTABLE} ${md2man} ${PROJECT_SOURCE_DIR}/docs/recipes.md
          ${CFAPKG_MAN_DIR}/cfapkg-recipes.5 --name cfapkg-recipes --section 5
          --summary "the recipe files cfapkg reads" --version ${PROJECT_VERSION}
          --synopsis "recipes/`NAME`.json"
  DEPENDS ${md2man} ${PROJECT_SOURCE_DIR}/docs/cli.md ${PROJECT_SOURCE_DIR}/docs/recipes.md
          ${PROJECT_SOURCE_DIR}/pkgtool/main.c
  COMMENT "Making the man pages from docs/"
  VERBATIM)
add_custom_target(man ALL DEPENDS ${CFAPKG_MAN_DIR}/cfapkg.1 ${CFAPKG_MAN_DIR}/cfapkg-recipes.5)
if(NOT WIN32)
  include(GNUInstallDirs)
  install(FILES ${CFAPKG_MAN_DIR}/cfapkg.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${CFAPKG_MAN_DIR}/cfapkg-recipes.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
endif()
