# The env profiles (templates/env/*.env): compiled into the binary through a
# generated .cc, installed to share/topolaunch/env for admins to edit, and
# looked up there by default when the folder exists.
include(GNUInstallDirs)
file(GLOB TOPOLAUNCH_ENV_TEMPLATES CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/templates/env/*.env")
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/env_templates_builtin.cc
  COMMAND ${CMAKE_COMMAND} -DTEMPLATE_DIR=${PROJECT_SOURCE_DIR}/templates/env
          -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/generated/env_templates_builtin.cc
          -P ${PROJECT_SOURCE_DIR}/src/env/embed_templates.cmake
  DEPENDS ${TOPOLAUNCH_ENV_TEMPLATES} ${PROJECT_SOURCE_DIR}/src/env/embed_templates.cmake
  COMMENT "Embedding templates/env into the binary")
set(TOPOLAUNCH_TEMPLATES_INSTALL_DIR "${CMAKE_INSTALL_FULL_DATADIR}/topolaunch/env")
target_compile_definitions(topolaunch PRIVATE TOPOLAUNCH_TEMPLATES_DIR="${TOPOLAUNCH_TEMPLATES_INSTALL_DIR}")
install(FILES ${TOPOLAUNCH_ENV_TEMPLATES} DESTINATION ${CMAKE_INSTALL_DATADIR}/topolaunch/env)
