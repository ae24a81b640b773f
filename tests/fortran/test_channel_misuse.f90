! The Fortran module asyncsolve_channel used wrongly and rightly: every
! misuse must come back as the C API's status code, and a correct exchange
! must carry the data and count it. Run under mpiexec with 1 to 4 ranks;
! ranks pair up (0-1, 2-3) for the two-ended checks, over both transports.
! Prints one line per failed check and "test_channel_misuse: ok" from rank 0;
! exits 1 if any check failed on any rank.
program test_channel_misuse
  use, intrinsic :: iso_c_binding, only: c_associated, c_double, c_int, c_int64_t, c_loc, &
                                         c_null_ptr, c_sizeof
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  use mpi_f08
  use asyncsolve_channel
  implicit none

  type(MPI_Comm) :: comm
  integer :: rank, size, partner, failures, total
  real(c_double), target, asynchronous :: send8(4), recv8(4)
  integer(c_int64_t), target, asynchronous :: send_odd(2), recv_odd(2)

  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, size)
  failures = 0
  partner = ieor(rank, 1)
  if (partner >= size) partner = -1

  call constants_match_the_header()
  call null_channel()
  call invalid_configurations()
  call strerror_texts()
  call empty_create()
  if (partner >= 0) then
    call wrong_size_between_the_ends(AS_TRANSPORT_MPI)
    call exchange(AS_TRANSPORT_MPI, AS_MODE_ASYNC)
    call exchange(AS_TRANSPORT_MPI, AS_MODE_RACY)
  end if
  ! rma: collective over the communicator, so every rank takes part (a rank
  ! without a partner with a placeholder).
  call wrong_size_between_the_ends(AS_TRANSPORT_RMA)
  call exchange(AS_TRANSPORT_RMA, AS_MODE_ASYNC)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, comm)
  if (rank == 0 .and. total == 0) write (output_unit, '(a,i0,a)') &
    "test_channel_misuse: ok (", size, " ranks)"
  call MPI_Comm_free(comm)
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  subroutine expect(got, want, what)
    integer(c_int), intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got == want) return
    failures = failures + 1
    write (error_unit, '(a,i0,a,a,a,i0,a,a,a,i0,a)') "rank ", rank, ": ", what, ": got ", got, &
      " (", as_strerror(got), "), expected ", want, ""
  end subroutine expect

  subroutine expect_true(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (condition) return
    failures = failures + 1
    write (error_unit, '(a,i0,a,a)') "rank ", rank, ": ", what
  end subroutine expect_true

  !> The module's constants are the header's enums.
  subroutine constants_match_the_header()
    call expect(AS_SUCCESS, 0_c_int, "AS_SUCCESS")
    call expect(AS_ERR_ARG, 1_c_int, "AS_ERR_ARG")
    call expect(AS_ERR_MISMATCH, 2_c_int, "AS_ERR_MISMATCH")
    call expect(AS_ERR_STATE, 3_c_int, "AS_ERR_STATE")
    call expect(AS_ERR_TRANSPORT, 4_c_int, "AS_ERR_TRANSPORT")
    call expect(AS_ERR_NOMEM, 5_c_int, "AS_ERR_NOMEM")
    call expect(AS_ERR_UNSUPPORTED, 6_c_int, "AS_ERR_UNSUPPORTED")
    call expect(AS_MODE_ASYNC, 0_c_int, "AS_MODE_ASYNC")
    call expect(AS_MODE_RACY, 1_c_int, "AS_MODE_RACY")
    call expect(AS_TRANSPORT_MPI, 0_c_int, "AS_TRANSPORT_MPI")
    call expect(AS_TRANSPORT_RMA, 1_c_int, "AS_TRANSPORT_RMA")
    call expect(AS_TRANSPORT_SHMEM, 2_c_int, "AS_TRANSPORT_SHMEM")
  end subroutine constants_match_the_header

  !> Every call on a null channel: AS_ERR_ARG; destroying one: AS_ERR_STATE.
  subroutine null_channel()
    type(as_channel) :: ch, many(2)
    type(as_channel_stats) :: stats
    integer(c_int) :: flag, count

    call expect_true(.not. c_associated(ch%handle), "a new as_channel is null")
    call expect(as_channel_can_send(ch, flag), AS_ERR_ARG, "can_send(null)")
    call expect(as_channel_send(ch), AS_ERR_ARG, "send(null)")
    call expect(as_channel_can_recv(ch, flag), AS_ERR_ARG, "can_recv(null)")
    call expect(as_channel_recv(ch, count), AS_ERR_ARG, "recv(null)")
    call expect(as_channel_recv(ch), AS_ERR_ARG, "recv(null) without the batch")
    call expect(as_channel_progress(ch), AS_ERR_ARG, "progress(null)")
    call expect(as_channel_get_stats(ch, stats), AS_ERR_ARG, "get_stats(null)")
    call expect(as_channel_in_flight(ch, count), AS_ERR_ARG, "in_flight(null)")
    call expect(as_channel_destroy(ch), AS_ERR_STATE, "destroy(null)")
    call expect(as_channels_destroy(2_c_int, many), AS_ERR_STATE, "channels_destroy(nulls)")
    call expect(as_channels_destroy(-1_c_int, many), AS_ERR_ARG, "channels_destroy(-1)")
  end subroutine null_channel

  !> A valid configuration toward `peer` over `transport`.
  function config_to(peer, transport) result(c)
    integer, intent(in) :: peer
    integer(c_int), intent(in) :: transport
    type(as_channel_config) :: c
    call as_channel_config_init(c)
    c%transport = transport
    c%comm = comm%MPI_VAL
    c%peer = peer
    c%message_size = c_sizeof(send8)
    c%sendbuf = c_loc(send8)
    c%recvbuf = c_loc(recv8)
  end function config_to

  !> Bad configurations fail locally, before any message: AS_ERR_ARG.
  subroutine invalid_configurations()
    type(as_channel_config) :: c
    type(as_channel) :: ch
    integer :: other

    other = mod(rank + 1, max(size, 2))
    call as_channel_config_init(c)
    call expect(c%transport, AS_TRANSPORT_MPI, "default transport")
    call expect(c%comm, MPI_COMM_NULL%MPI_VAL, "default comm (MPI_COMM_NULL)")
    call expect(c%peer, -1_c_int, "default peer")
    call expect(c%tag, 0_c_int, "default tag")
    call expect(c%max_in_flight, 1_c_int, "default max_in_flight")
    call expect(c%mode, AS_MODE_ASYNC, "default mode")
    call expect_true(c%message_size == 0 .and. .not. c_associated(c%sendbuf) .and. &
                     .not. c_associated(c%recvbuf), "default size and buffers")
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create with the defaults (no comm)")

    c = config_to(other, AS_TRANSPORT_MPI)
    c%message_size = 0
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create with size 0")
    c = config_to(other, AS_TRANSPORT_MPI)
    c%mode = AS_MODE_RACY
    c%message_size = 12
    c%sendbuf = c_loc(send_odd)
    c%recvbuf = c_loc(recv_odd)
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "racy with a size not a multiple of 8")
    c = config_to(other, AS_TRANSPORT_MPI)
    c%recvbuf = c_null_ptr
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create without a receive buffer")
    c = config_to(rank, AS_TRANSPORT_MPI)
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create toward oneself")
    c = config_to(size, AS_TRANSPORT_MPI)
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create toward a rank out of range")
    c = config_to(other, AS_TRANSPORT_MPI)
    c%max_in_flight = 0
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create with max_in_flight 0")
    c = config_to(other, AS_TRANSPORT_MPI)
    c%mode = 7
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create with mode 7")
    c = config_to(other, AS_TRANSPORT_MPI)
    c%transport = 9
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create with transport 9")
    c = config_to(other, AS_TRANSPORT_MPI)
    c%tag = -1
    call expect(as_channel_create(ch, c), AS_ERR_ARG, "create with tag -1")
    call expect_true(.not. c_associated(ch%handle), "a failed create leaves the channel null")
  end subroutine invalid_configurations

  subroutine strerror_texts()
    call expect_true(len(as_strerror(AS_SUCCESS)) > 0, "as_strerror(AS_SUCCESS) is empty")
    call expect_true(as_strerror(AS_ERR_MISMATCH) /= as_strerror(AS_ERR_ARG), &
                     "as_strerror tells AS_ERR_MISMATCH from AS_ERR_ARG")
    call expect_true(len(as_strerror(12345_c_int)) > 0, "as_strerror of an unknown code")
  end subroutine strerror_texts

  subroutine empty_create()
    type(as_channel) :: none(1)
    type(as_channel_config) :: configs(1)
    call expect(as_channels_create(0_c_int, none, configs), AS_SUCCESS, "channels_create(0)")
    call expect(as_channels_destroy(0_c_int, none), AS_SUCCESS, "channels_destroy(0)")
  end subroutine empty_create

  !> The two ends ask for different sizes: both get AS_ERR_MISMATCH (rma:
  !> every rank of the communicator does) and no channel.
  subroutine wrong_size_between_the_ends(transport)
    integer(c_int), intent(in) :: transport
    type(as_channel) :: ch(1)
    type(as_channel_config) :: c(1)

    if (partner >= 0) then
      c(1) = config_to(partner, transport)
      if (rank < partner) c(1)%message_size = 16  ! the lower rank asks for less
    else
      call as_channel_config_init(c(1))
      c(1)%transport = transport
      c(1)%comm = comm%MPI_VAL
      c(1)%peer = MPI_PROC_NULL
    end if
    if (transport == AS_TRANSPORT_RMA .and. size == 1) then
      ! The placeholder alone: no mismatch possible, nothing to check.
      call expect(as_channels_create(1_c_int, ch, c), AS_SUCCESS, "rma placeholder create")
      call expect(as_channels_destroy(1_c_int, ch), AS_SUCCESS, "rma placeholder destroy")
      return
    end if
    call expect(as_channels_create(1_c_int, ch, c), AS_ERR_MISMATCH, &
                trim(merge("mpi: sizes 16 and 32", "rma: sizes 16 and 32", &
                           transport == AS_TRANSPORT_MPI)))
    call expect_true(.not. c_associated(ch(1)%handle), "a mismatched create leaves it null")
  end subroutine wrong_size_between_the_ends

  !> A correct channel: one message each way arrives whole and is counted.
  subroutine exchange(transport, mode)
    integer(c_int), intent(in) :: transport, mode
    type(as_channel) :: ch(1)
    type(as_channel_config) :: c(1)
    type(as_channel_stats) :: stats
    integer(c_int) :: flag, batch, in_flight
    integer :: spins

    if (partner >= 0) then
      c(1) = config_to(partner, transport)
      c(1)%mode = mode
      c(1)%max_in_flight = 2
    else
      call as_channel_config_init(c(1))
      c(1)%transport = transport
      c(1)%comm = comm%MPI_VAL
      c(1)%peer = MPI_PROC_NULL
    end if
    send8 = [real(rank, c_double), 1.5_c_double, -2.0_c_double, real(100 + rank, c_double)]
    recv8 = -1
    call expect(as_channels_create(1_c_int, ch, c), AS_SUCCESS, "create a valid channel")
    call expect_true(c_associated(ch(1)%handle), "a created channel is not null")
    if (partner >= 0) then
      call expect(as_channel_can_send(ch(1), flag), AS_SUCCESS, "can_send")
      call expect(flag, 1_c_int, "can_send on an empty channel")
      call expect(as_channel_send(ch(1)), AS_SUCCESS, "send")
      send8 = 0  ! reusable as soon as send returns
      batch = 0
      spins = 0
      do while (batch == 0 .and. spins < 10000000)
        call expect(as_channel_can_recv(ch(1), flag), AS_SUCCESS, "can_recv")
        if (flag /= 0) call expect(as_channel_recv(ch(1), batch), AS_SUCCESS, "recv")
        spins = spins + 1
      end do
      call expect(batch, 1_c_int, "one message arrived")
      ! Bit for bit: the bytes sent are the bytes received.
      call expect_true(all(transfer(recv8, 0_c_int64_t, 4) == &
                           transfer([real(partner, c_double), 1.5_c_double, -2.0_c_double, &
                                     real(100 + partner, c_double)], 0_c_int64_t, 4)), &
                       "the message arrived whole")
      call expect(as_channel_get_stats(ch(1), stats), AS_SUCCESS, "get_stats")
      call expect_true(stats%sent == 1 .and. stats%arrived == 1 .and. stats%delivered == 1 .and. &
                       stats%blocked_sends == 0 .and. stats%recv_calls >= 1, &
                       "stats: sent 1, arrived 1, delivered 1, no blocked send")
      call expect(as_channel_in_flight(ch(1), in_flight), AS_SUCCESS, "in_flight")
      call expect_true(in_flight >= 0 .and. in_flight <= 1, "in_flight is 0 or 1")
      call expect(as_channel_progress(ch(1)), AS_SUCCESS, "progress")
    end if
    call expect(as_channels_destroy(1_c_int, ch), AS_SUCCESS, "destroy")
    call expect_true(.not. c_associated(ch(1)%handle), "destroy nulls the channel")
  end subroutine exchange

end program test_channel_misuse
