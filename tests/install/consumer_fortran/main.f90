! Two ranks send each other one message through an installed asyncsolve's
! Fortran module; rank 0 prints "asyncsolve fortran: ok" if both arrived
! whole (one rank: only the module's constants and a null channel).
program consumer_fortran
  use, intrinsic :: iso_c_binding, only: c_double, c_int, c_loc, c_sizeof
  use mpi_f08
  use asyncsolve_channel
  implicit none
  type(as_channel) :: ch(1)
  type(as_channel_config) :: config(1)
  real(c_double), target, asynchronous :: out(2), in(2)
  integer :: rank, size, ok, all_ok
  integer(c_int) :: batch, status

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  ok = merge(1, 0, as_channel_send(ch(1)) == AS_ERR_ARG)
  if (size >= 2 .and. rank < 2) then
    call as_channel_config_init(config(1))
    config(1)%comm = MPI_COMM_WORLD%MPI_VAL
    config(1)%peer = 1 - rank
    config(1)%message_size = c_sizeof(out)
    config(1)%sendbuf = c_loc(out)
    config(1)%recvbuf = c_loc(in)
    out = [real(rank, c_double), 42.0_c_double]
    in = -1
    status = as_channels_create(1_c_int, ch, config)
    if (status == AS_SUCCESS) status = as_channel_send(ch(1))
    batch = 0
    do while (status == AS_SUCCESS .and. batch == 0)
      status = as_channel_recv(ch(1), batch)
    end do
    if (status == AS_SUCCESS) status = as_channels_destroy(1_c_int, ch)
    if (status /= AS_SUCCESS .or. in(1) /= real(1 - rank, c_double) .or. in(2) /= 42) ok = 0
  end if
  call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  if (rank == 0) print '(a)', "asyncsolve fortran: "//trim(merge("ok    ", "FAILED", all_ok == 1))
  call MPI_Finalize()
  if (all_ok /= 1) stop 1
end program consumer_fortran
