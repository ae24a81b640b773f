!> asyncsolve_channel: the asynchronous channels of include/asyncsolve/channel.h
!> (paper 000, Bethune et al. 2014, section 4.2) for Fortran 2008 programs.
!>
!> Every constant, type and function of channel.h, with the same names and
!> meanings (docs/channels.md is the reference). The functions are bind(C)
!> interfaces to the C library, so they return the C status codes: AS_SUCCESS
!> or an AS_ERR_* value. Differences from C, all forced by the language:
!>
!> * as_channel_config%comm is a Fortran communicator handle: an INTEGER from
!>   the mpi module, or comm%MPI_VAL of mpi_f08's type(MPI_Comm). The library
!>   converts it with MPI_Comm_f2c (src/channel/fortran/channel_f.cpp), so the
!>   module itself does not depend on either MPI module.
!> * as_channel is a bind(C) type holding the C handle (as_channel*); a
!>   default-initialised one is the null channel. Pass it as it is: create and
!>   destroy update it (as_channel** in C), the other calls read it.
!> * sendbuf and recvbuf are C addresses: c_loc(buffer) of a variable with
!>   the TARGET and ASYNCHRONOUS attributes that outlives the channel (racy
!>   mode: 8-byte aligned, and a size that is a multiple of 8). ASYNCHRONOUS
!>   is not optional: the channel writes recvbuf inside calls that do not
!>   name it (recv; racy: any call), and without the attribute an optimising
!>   compiler may keep the buffer's old value (gfortran 12 -O3 does), as for
!>   the buffers of non-blocking MPI calls.
!> * as_strerror returns a Fortran string; as_strerror_c is the raw binding.
!>
!> Nothing here is thread-safe for one channel. create and destroy are
!> collective between the two ends (rma and shmem: over the whole comm), as
!> in C.
module asyncsolve_channel
  use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_f_pointer, c_int, &
                                         c_long_long, c_null_ptr, c_ptr, c_size_t
  implicit none
  private

  !> Status codes (enum as_status).
  integer(c_int), parameter, public :: AS_SUCCESS = 0
  integer(c_int), parameter, public :: AS_ERR_ARG = 1          !< an argument is invalid
  integer(c_int), parameter, public :: AS_ERR_MISMATCH = 2     !< the two ends disagree
  integer(c_int), parameter, public :: AS_ERR_STATE = 3        !< not allowed now
  integer(c_int), parameter, public :: AS_ERR_TRANSPORT = 4    !< MPI reported an error
  integer(c_int), parameter, public :: AS_ERR_NOMEM = 5        !< out of memory
  integer(c_int), parameter, public :: AS_ERR_UNSUPPORTED = 6  !< transport not available

  !> Delivery modes (enum as_mode).
  integer(c_int), parameter, public :: AS_MODE_ASYNC = 0
  integer(c_int), parameter, public :: AS_MODE_RACY = 1

  !> Transports (enum as_transport).
  integer(c_int), parameter, public :: AS_TRANSPORT_MPI = 0
  integer(c_int), parameter, public :: AS_TRANSPORT_RMA = 1
  integer(c_int), parameter, public :: AS_TRANSPORT_SHMEM = 2

  !> One end of a channel: the C handle (as_channel*). Null until created,
  !> null again after destroy. Owned by the library; never copy an open one
  !> into two places that both destroy it.
  type, bind(C), public :: as_channel
    type(c_ptr) :: handle = c_null_ptr
  end type as_channel

  !> How to create one end of a channel (as_channel_config, with comm as a
  !> Fortran handle). Fill it with as_channel_config_init first. Its layout
  !> is mirrored by struct as_f_channel_config in channel_f.cpp.
  type, bind(C), public :: as_channel_config
    integer(c_int) :: transport         !< AS_TRANSPORT_*; default AS_TRANSPORT_MPI
    integer(c_int) :: comm              !< Fortran communicator handle; default MPI_COMM_NULL
    integer(c_int) :: peer              !< rank of the other end in comm; default -1
    integer(c_int) :: tag               !< tells channels between one pair apart; default 0
    integer(c_size_t) :: message_size   !< bytes per message, > 0
    type(c_ptr) :: sendbuf              !< c_loc of message_size bytes read by send()
    type(c_ptr) :: recvbuf              !< c_loc of message_size bytes written by recv()
    integer(c_int) :: max_in_flight     !< unacknowledged messages per direction; default 1
    integer(c_int) :: mode              !< AS_MODE_*; default AS_MODE_ASYNC
  end type as_channel_config

  !> Counters of one end (as_channel_stats).
  type, bind(C), public :: as_channel_stats
    integer(c_long_long) :: sent = 0           !< messages sent
    integer(c_long_long) :: arrived = 0        !< messages that arrived
    integer(c_long_long) :: delivered = 0      !< messages copied into the receive buffer
    integer(c_long_long) :: discarded = 0      !< async: superseded before recv()
    integer(c_long_long) :: recv_calls = 0     !< calls of recv()
    integer(c_long_long) :: blocked_sends = 0  !< send() calls that waited for a slot
  end type as_channel_stats

  public :: as_channel_config_init, as_channel_create, as_channels_create
  public :: as_channel_destroy, as_channels_destroy
  public :: as_channel_can_send, as_channel_send, as_channel_can_recv, as_channel_recv
  public :: as_channel_progress, as_channel_get_stats, as_channel_in_flight
  public :: as_strerror, as_strerror_c

  interface
    !> Fills config with the defaults (transport MPI, comm MPI_COMM_NULL,
    !> peer -1, tag 0, size 0, null buffers, max_in_flight 1, async). Local.
    subroutine as_channel_config_init(config) bind(C, name="as_f_channel_config_init")
      import :: as_channel_config
      type(as_channel_config), intent(out) :: config
    end subroutine as_channel_config_init

    !> Creates one end of a channel into `channel`. Collective between the
    !> two ends (rma: over comm). On error `channel` stays null.
    integer(c_int) function as_channel_create(channel, config) &
        bind(C, name="as_f_channel_create")
      import :: as_channel, as_channel_config, c_int
      type(as_channel), intent(inout) :: channel
      type(as_channel_config), intent(in) :: config
    end function as_channel_create

    !> Creates `count` channels at once, with no ordering constraint between
    !> them. Collective with each peer (rma: over comm). On error all stay null.
    integer(c_int) function as_channels_create(count, channels, configs) &
        bind(C, name="as_f_channels_create")
      import :: as_channel, as_channel_config, c_int
      integer(c_int), value :: count
      type(as_channel), intent(inout) :: channels(*)
      type(as_channel_config), intent(in) :: configs(*)
    end function as_channels_create

    !> Completes everything in flight, closes the channel and nulls it.
    !> Collective between the two ends. A null channel: AS_ERR_STATE.
    integer(c_int) function as_channel_destroy(channel) bind(C, name="as_channel_destroy")
      import :: as_channel, c_int
      type(as_channel), intent(inout) :: channel
    end function as_channel_destroy

    !> Destroys `count` channels together (rma: exactly those of one create
    !> call, collective over comm).
    integer(c_int) function as_channels_destroy(count, channels) &
        bind(C, name="as_channels_destroy")
      import :: as_channel, c_int
      integer(c_int), value :: count
      type(as_channel), intent(inout) :: channels(*)
    end function as_channels_destroy

    !> flag = 1 if send() will not block (fewer than max_in_flight
    !> unacknowledged messages), else 0. Local.
    integer(c_int) function as_channel_can_send(channel, flag) &
        bind(C, name="as_channel_can_send")
      import :: as_channel, c_int
      type(as_channel), value :: channel
      integer(c_int), intent(out) :: flag
    end function as_channel_can_send

    !> Sends message_size bytes from sendbuf, which is reusable on return.
    !> Blocks only while the channel is full. Local.
    integer(c_int) function as_channel_send(channel) bind(C, name="as_channel_send")
      import :: as_channel, c_int
      type(as_channel), value :: channel
    end function as_channel_send

    !> flag = 1 if a message arrived since the last recv() (async), always 1
    !> (racy). Progresses the receives. Local.
    integer(c_int) function as_channel_can_recv(channel, flag) &
        bind(C, name="as_channel_can_recv")
      import :: as_channel, c_int
      type(as_channel), value :: channel
      integer(c_int), intent(out) :: flag
    end function as_channel_can_recv

    !> Async: copies the newest arrived message into recvbuf, discarding the
    !> older ones. Racy: progresses. `messages` (optional): how many arrived
    !> since the last call (the batch size). Local.
    integer(c_int) function as_channel_recv(channel, messages) bind(C, name="as_channel_recv")
      import :: as_channel, c_int
      type(as_channel), value :: channel
      integer(c_int), intent(out), optional :: messages
    end function as_channel_recv

    !> Progresses sends and receives without sending or receiving. Local.
    integer(c_int) function as_channel_progress(channel) bind(C, name="as_channel_progress")
      import :: as_channel, c_int
      type(as_channel), value :: channel
    end function as_channel_progress

    !> Copies the channel's counters into `stats`. Local.
    integer(c_int) function as_channel_get_stats(channel, stats) &
        bind(C, name="as_channel_get_stats")
      import :: as_channel, as_channel_stats, c_int
      type(as_channel), value :: channel
      type(as_channel_stats), intent(out) :: stats
    end function as_channel_get_stats

    !> Messages sent and not yet known to be acknowledged. Local.
    integer(c_int) function as_channel_in_flight(channel, count) &
        bind(C, name="as_channel_in_flight")
      import :: as_channel, c_int
      type(as_channel), value :: channel
      integer(c_int), intent(out) :: count
    end function as_channel_in_flight

    !> The C function as_strerror: a static NUL-terminated description.
    type(c_ptr) function as_strerror_c(status) bind(C, name="as_strerror")
      import :: c_int, c_ptr
      integer(c_int), value :: status
    end function as_strerror_c
  end interface

  interface
    integer(c_size_t) function c_strlen(text) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: text
    end function c_strlen
  end interface

contains

  !> A description of a status code, as a Fortran string. Local.
  function as_strerror(status) result(text)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: i, n

    p = as_strerror_c(status)
    if (.not. c_associated(p)) then
      text = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function as_strerror

end module asyncsolve_channel
