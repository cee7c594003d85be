/* pipesim --version: the version and what this build has (MPI backend,
 * OpenBLAS build and the core kernel it picked, library versions, sanitizers),
 * so a user sees what they got. */
#include "cli/cli.h"
#include "base/ps_util.h"

#include <cblas.h>
#include <gsl/gsl_version.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PIPESIM_MPI
#include <mpi.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CLI_SANITIZERS "address"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_SANITIZERS "address"
#endif
#endif
#ifndef CLI_SANITIZERS
#define CLI_SANITIZERS "none"
#endif

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = 0;
}

void cli_version(FILE *f)
{
    fprintf(f, "pipesim %s\n", PS_VERSION);
#ifdef PIPESIM_MPI
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    /* one of the few MPI calls allowed before MPI_Init */
    if (MPI_Get_library_version(mpi, &len) != MPI_SUCCESS)
        snprintf(mpi, sizeof mpi, "unknown library");
    char *nl = strpbrk(mpi, ",\n"); /* Open MPI appends the release date and repo */
    if (nl)
        *nl = 0;
    trim(mpi);
    fprintf(f, "  MPI backend:  yes (%s; validate --backend mpi under mpirun)\n", mpi);
#else
    fprintf(f, "  MPI backend:  no (built without Open MPI/MPICH; validate --backend mpi "
               "is unavailable)\n");
#endif
    char cfg[256];
    snprintf(cfg, sizeof cfg, "%s", openblas_get_config());
    trim(cfg);
    const char *ct = getenv("OPENBLAS_CORETYPE");
    fprintf(f, "  OpenBLAS:     %s; core kernel in use: %s%s%s%s\n", cfg, openblas_get_corename(),
            ct ? " (forced by OPENBLAS_CORETYPE=" : "", ct ? ct : "", ct ? ")" : "");
    fprintf(f, "  libraries:    GSL %s, SQLite %s, jansson %s\n", GSL_VERSION,
            sqlite3_libversion(), JANSSON_VERSION);
    fprintf(f, "  sanitizers:   %s\n", CLI_SANITIZERS);
}
